package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EnvRealIstiod set to 0 starts the clusters this test binary starts without a real istiod
// (hack/kube/up.sh's REAL_ISTIOD): kwok then marks istiod's pods ready at once, as the bed
// did before it ran istiod. make test's shared cluster honours it too (hack/test.sh).
const EnvRealIstiod = "ISTIOCTL_TEST_REAL_ISTIOD"

// OptOutLabel on istiod's pods (values.pilot.podLabels) leaves them to kwok: a test that
// installs many control planes and looks only at the objects saves their processes.
const OptOutLabel = "istioctl.test/real-istiod"

// stateDir is the cluster's up.sh state directory: its own, or the one holding the
// kubeconfig make test points at.
func (c *Cluster) stateDir() string {
	if c.state != "" {
		return c.state
	}
	return filepath.Dir(c.Kubeconfig)
}

// RequireRealIstiod fails the test when the cluster runs no real istiod: what it checks is
// istiod's own behaviour, which kwok cannot fake.
func (c *Cluster) RequireRealIstiod(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(c.stateDir(), "pids", "realistiod.pid")); err != nil {
		t.Fatalf("this test needs the bed's real istiod, and cluster %s runs none (%s=0?): %v", c.Context, EnvRealIstiod, err)
	}
}

// IstiodPID returns the pid of the istiod process the bed runs for the pod of workload
// (a Deployment's name) in namespace, waiting up to a minute for one to run.
func (c *Cluster) IstiodPID(t testing.TB, namespace, workload string) (pod string, pid int) {
	t.Helper()
	c.RequireRealIstiod(t)
	deadline := time.Now().Add(time.Minute)
	for {
		pods, err := c.Kube.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if !strings.HasPrefix(p.Name, workload+"-") || p.DeletionTimestamp != nil {
				continue
			}
			b, err := os.ReadFile(filepath.Join(c.stateDir(), "realistiod", "pods", namespace+"_"+p.Name, "pid"))
			if err != nil {
				continue
			}
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && syscall.Kill(n, 0) == nil {
				return p.Name, n
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no istiod process runs for %s/%s", namespace, workload)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// KillIstiod SIGKILLs the istiod process of workload in namespace, as an OOM kill would; the
// bed restarts it after a kubelet's back-off (10 s). It returns the pod's name.
func (c *Cluster) KillIstiod(t testing.TB, namespace, workload string) string {
	t.Helper()
	pod, pid := c.IstiodPID(t, namespace, workload)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing istiod %d: %v", pid, err)
	}
	return pod
}

// AuditLog is the path of the apiserver's audit log: every write request (Metadata level:
// who, verb, resource, object, response code), for tests that prove what a command wrote.
func (c *Cluster) AuditLog() string { return filepath.Join(c.stateDir(), "logs", "audit.log") }

// WaitRolledOut waits up to two minutes until Deployment namespace/name has rolled out its
// template, as kubectl rollout status does: every replica updated, ready and available, no
// old one left.
func (c *Cluster) WaitRolledOut(t testing.TB, namespace, name string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		d, err := c.Kube.AppsV1().Deployments(namespace).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		s := d.Status
		if s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.Replicas == want && s.ReadyReplicas == want && s.AvailableReplicas == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Deployment %s/%s not rolled out after 2 minutes: %+v", namespace, name, s)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
