package cmd_test

import (
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestLockExitE2E: what the command line makes of the cluster lock (its behaviour is
// operator/action's TestWriteLockE2E): install -y --lock-timeout 0 against a held lock
// exits 3, naming the holder and the flag; --skip-lock writes without it, printing why
// that is dangerous.
func TestLockExitE2E(t *testing.T) {
	c := cluster.Get(t)
	_, holder := harness.HoldLock(t, c)
	x := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}
	r := x.Run("install", "-y", "--lock-timeout", "0")
	if out := r.Output(); r.Code != 3 || !strings.Contains(out, holder.String()) || !strings.Contains(out, "--lock-timeout is 0") {
		t.Errorf("install --lock-timeout 0 against a held lock: exit %d\n%s", r.Code, out)
	}
	r = x.Run("uninstall", "-r", "nothing-here", "--ignore-not-found", "-y", "--skip-lock")
	if r.Code != 0 || !strings.Contains(r.Stdout, "! --skip-lock: writing WITHOUT the cluster lock") {
		t.Errorf("--skip-lock: exit %d\n%s", r.Code, r.Output())
	}
}
