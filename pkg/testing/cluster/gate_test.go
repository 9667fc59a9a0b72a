package cluster_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// envGateSubject marks the sub-run of TestHealthGate: the subject tests below run only
// there, against the private cluster the self-test hands them as the shared one.
const envGateSubject = "ISTIOCTL_TEST_GATE_SUBJECT"

// TestHealthGate proves the health gate: a private cluster is handed to a sub-run of this
// binary as its shared cluster; while the sub-run's first test uses it, its kube-apiserver
// is killed. That test must fail with the apiserver's log tail, and every later cluster
// test of the sub-run must fail within 10 s of the kill, naming the same cause.
func TestHealthGate(t *testing.T) {
	c := cluster.StartPrivate(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestGateSubject", "-test.v=test2json", "-test.count=1", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), envGateSubject+"=1", cluster.EnvKubeconfig+"="+c.Kubeconfig, cluster.EnvTier+"=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	// Read the sub-run's verbose output: each test's lines, and when each ended.
	type result struct {
		Passed bool
		End    time.Time
		Output []string
	}
	results := map[string]*result{}
	current := ""
	var killed time.Time
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "\x16") // test2json's framing mark
		switch {
		case strings.HasPrefix(line, "=== RUN   "):
			current = strings.TrimPrefix(line, "=== RUN   ")
			results[current] = &result{}
		case strings.HasPrefix(line, "--- PASS: "), strings.HasPrefix(line, "--- FAIL: "):
			name := strings.Fields(line)[2]
			if r := results[name]; r != nil {
				r.Passed, r.End = strings.HasPrefix(line, "--- PASS"), time.Now()
			}
		case current != "":
			results[current].Output = append(results[current].Output, line)
		}
		if strings.Contains(line, "subject: using the cluster") && killed.IsZero() {
			c.KillAPIServer(t)
			killed = time.Now()
		}
	}
	_ = cmd.Wait()
	if killed.IsZero() {
		t.Fatalf("the sub-run never used the cluster: %s", dump(results))
	}
	if cmd.ProcessState.ExitCode() == 0 {
		t.Fatalf("the sub-run passed with its apiserver killed")
	}
	first := results["TestGateSubject1"]
	if first == nil || first.Passed || !strings.Contains(strings.Join(first.Output, "\n"), "kube-apiserver (pid") {
		t.Fatalf("the running test did not fail naming the dead kube-apiserver:\n%s", dump(results))
	}
	t.Logf("the running test's failure:\n%s", strings.Join(first.Output, "\n"))
	for _, name := range []string{"TestGateSubject2", "TestGateSubject3"} {
		r := results[name]
		if r == nil || r.Passed {
			t.Fatalf("%s did not fail:\n%s", name, dump(results))
		}
		text := strings.Join(r.Output, "\n")
		if !strings.Contains(text, "unusable for the rest of this run") || !strings.Contains(text, "kube-apiserver (pid") {
			t.Errorf("%s does not name the cause found before it:\n%s", name, text)
		}
		if d := r.End.Sub(killed); d > 10*time.Second {
			t.Errorf("%s failed %s after the kill, want at most 10s", name, d.Round(time.Millisecond))
		} else {
			t.Logf("%s failed %s after the kill: %s", name, d.Round(time.Millisecond), firstLine(text))
		}
	}
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// The subjects of TestHealthGate's sub-run. Outside it they have nothing to prove.

func TestGateSubject1(t *testing.T) {
	subject(t)
	c := cluster.Get(t)
	t.Log("subject: using the cluster")
	// Use it until it fails: the watch fails this test with the component's log tail, the
	// calls themselves only with "connection refused".
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := c.Kube.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{}); err != nil {
			time.Sleep(2 * time.Second) // the watch's next look
			t.Fatalf("listing namespaces: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestGateSubject2(t *testing.T) { subject(t); cluster.Get(t) }

func TestGateSubject3(t *testing.T) { subject(t); cluster.Get(t) }

func subject(t *testing.T) {
	if os.Getenv(envGateSubject) == "" {
		t.Skip("a subject of TestHealthGate's sub-run")
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
