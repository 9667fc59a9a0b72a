package cmd_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// onDone calls fn once, synchronously, when the event stream written to it ends a run:
// the command waits for fn before it goes on.
type onDone struct {
	once sync.Once
	fn   func()
}

func (w *onDone) Write(p []byte) (int, error) {
	if strings.Contains(string(p), `"type":"done"`) {
		w.once.Do(w.fn)
	}
	return len(p), nil
}

// TestInstallVerifyE2E: upstream's spelling `apply -y --verify` installs and runs
// verify-install's checks; version -r lists only that revision's control plane; with an
// object deleted between the install and its checks, --verify exits 1 naming the check.
func TestInstallVerifyE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	x := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}
	x.MustRun("uninstall", "--purge", "-y")
	x.PurgeAtEnd()

	if out := x.MustRun("apply", "-y", "--set", "profile=minimal", "--verify"); !strings.Contains(out, "✔ Istio is installed and verified successfully") {
		t.Errorf("apply --verify printed no verdict:\n%s", out)
	}
	if out := x.MustRun("version", "-r", "no-such-revision"); !strings.Contains(out, "control plane version: none") {
		t.Errorf("version -r no-such-revision listed a control plane:\n%s", out)
	}
	x.Out = &onDone{fn: func() {
		err := c.Kube.CoreV1().ServiceAccounts("istio-system").Delete(context.Background(), "istio-reader-service-account", metav1.DeleteOptions{})
		if err != nil {
			t.Errorf("deleting the reader ServiceAccount: %v", err)
		}
	}}
	r := x.Run("install", "-y", "--set", "profile=minimal", "--verify", "-o", "json")
	if r.Code != 1 || !strings.Contains(r.ErrorLine(), "verify-install's checks failed: object-health") {
		t.Errorf("install --verify with an object gone: exit %d, want 1 naming object-health:\n%s%s", r.Code, r.Stderr, r.ErrorLine())
	}
}
