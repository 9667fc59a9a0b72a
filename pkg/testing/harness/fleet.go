package harness

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// What the fleet tests do to a bed's clusters, from the command line or through the
// actions alike.

// UnreachableKubeconfig is kubeconfig with context's server at a port nothing serves on
// loopback.
func UnreachableKubeconfig(t testing.TB, kubeconfig, context string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clusters[cfg.Contexts[context].Cluster].Server = "https://127.0.0.1:1"
	path := t.TempDir() + "/kubeconfig"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// WhenLocked calls fn once a writer holds c's cluster lock (within two minutes).
func WhenLocked(c *cluster.Cluster, fn func()) {
	err := Within(2*time.Minute, 20*time.Millisecond, func() (bool, string) {
		le, err := c.Kube.CoordinationV1().Leases("kube-system").Get(context.Background(), "istioctl-lock", metav1.GetOptions{})
		return err == nil && le.Spec.HolderIdentity != nil && *le.Spec.HolderIdentity != "", ""
	})
	if err == nil {
		fn()
	}
}
