package harness

import (
	"testing"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// Client is our client to c, as istioctl makes it (its field manager and user agent).
func Client(t testing.TB, c *cluster.Cluster) *kube.Client {
	t.Helper()
	client, err := kube.NewClientForConfig(c.Config, ownership.KubeOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	return client
}
