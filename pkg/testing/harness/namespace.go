package harness

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// LabelledNamespace is a fresh namespace of c (cluster.Cluster.Namespace) with labels: an
// injection label, a revision.
func LabelledNamespace(t testing.TB, c *cluster.Cluster, labels map[string]string) string {
	t.Helper()
	ns := c.Namespace(t)
	n, err := c.Kube.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range labels {
		n.Labels[k] = v
	}
	if _, err := c.Kube.CoreV1().Namespaces().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}
