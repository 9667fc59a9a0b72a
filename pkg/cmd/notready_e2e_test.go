package cmd_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// podSuffix is what the ReplicaSet and the pod add to a Deployment's name: random per run.
// nodeCounts are the scheduler's counts, which depend on how many nodes the cluster has.
var (
	podSuffix  = regexp.MustCompile(`-[0-9a-f]{8,10}-[0-9a-z]{5}\b`)
	nodeCounts = regexp.MustCompile(`\b\d+/\d+( nodes are available: )\d+( node\(s\)| Preemption)`)
)

// TestInstallNotReadyE2E: istiod cannot be scheduled (a nodeSelector no node matches). The
// install fails within its one readiness deadline with a report that names the Deployment
// and why (the pod's scheduling message), skips the gateways that depend on it, prunes
// nothing and exits non-zero. The text and JSON reports are golden files; the same spec
// without the nodeSelector then installs.
func TestInstallNotReadyE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Chdir("../..")
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	istioctl("uninstall", "--purge", "-y")
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()

	const timeout = 8 * time.Second
	start := time.Now()
	stdout, stderr, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "install", "-y", "-o", "json", "--readiness-timeout", timeout.String(),
		"--set", "components.pilot.k8s.nodeSelector.no-such-node=x")
	took := time.Since(start)
	if err == nil {
		t.Fatalf("an install whose istiod cannot be scheduled succeeded:\n%s", stdout)
	}
	// One deadline for the whole install; the margin is for a loaded machine, not a target.
	if took > timeout+30*time.Second {
		t.Errorf("failed after %v, the readiness timeout is %v", took, timeout)
	}
	for _, want := range []string{"Istiod: not ready within the readiness timeout (8s):", "Deployment/istio-system/istiod (0 of 1 replicas ready)",
		"unschedulable", "didn't match Pod's node affinity/selector", "allow more time with --readiness-timeout"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(stderr, "panic") {
		t.Errorf("stderr:\n%s", stderr)
	}

	stdout = podSuffix.ReplaceAllString(stdout, "-<pod>")
	stdout = nodeCounts.ReplaceAllString(stdout, "N/N${1}N$2")
	out := goldenEvents(t, stdout, "testdata/install/not-ready")
	if strings.Contains(out, " removed") {
		t.Errorf("a failed install pruned:\n%s", out)
	}

	// Nothing of the gateways was applied.
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istio-ingressgateway", metav1.GetOptions{}); err == nil {
		t.Error("the ingress gateway was applied although istiod never became ready")
	}
	// The same install without the nodeSelector succeeds.
	if out := istioctl("install", "-y"); !strings.Contains(out, "✔ Installation complete") {
		t.Errorf("install after the failed one:\n%s", out)
	}
}
