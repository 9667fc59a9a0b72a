package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The health gate: before a test is handed a shared cluster (Get, GetBed) the cluster is
// checked, so that a control plane that died fails the next test at once, with why, instead
// of every later test waiting out its own timeout. A dead cluster stays dead for the run:
// once one test found it, every later one in this binary fails at once with the same cause
// (a later binary finds it again in the first check, which fails fast on a dead process).

var (
	deadMu sync.Mutex
	// dead maps a cluster's state directory to why it was found dead, and by which test.
	dead = map[string]string{}
	// watched holds the tests (and clusters) a watch runs for.
	watched = map[string]bool{}
)

// crashLoopRestarts is how many restarts make an istiod in back-off a crash loop: a test
// that kills istiod once (KillIstiod) leaves one restart.
const crashLoopRestarts = 3

// gate fails t when c is not healthy, or was found dead before.
func (c *Cluster) gate(t testing.TB) {
	t.Helper()
	dir := c.stateDir()
	deadMu.Lock()
	cause := dead[dir]
	deadMu.Unlock()
	if cause != "" {
		t.Fatalf("cluster %s is unusable for the rest of this run: %s", c.Context, cause)
	}
	err := c.health()
	if err == nil {
		return
	}
	deadMu.Lock()
	dead[dir] = fmt.Sprintf("%v (found before %s)", firstLine(err.Error()), t.Name())
	deadMu.Unlock()
	t.Fatalf("cluster %s is not healthy before this test, so it and every later test on it fail: %v", c.Context, err)
}

// watch checks, every second while t runs, that c's processes still run: a control plane
// that dies during a test fails that test with the dead component's log tail (its own
// calls then fail too, but only say "connection refused"), and marks c dead for the rest
// of the run. It reads pid files and /proc only: no request to the cluster.
func (c *Cluster) watch(t testing.TB) {
	dir := c.stateDir()
	key := t.Name() + "\x00" + dir
	deadMu.Lock()
	already := watched[key]
	watched[key] = true
	deadMu.Unlock()
	if already { // asked for twice by one test
		return
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	t.Cleanup(func() {
		close(done)
		<-stopped
		deadMu.Lock()
		delete(watched, key)
		deadMu.Unlock()
	})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			err := c.processesAlive()
			if err == nil {
				continue
			}
			deadMu.Lock()
			if dead[dir] == "" {
				dead[dir] = fmt.Sprintf("%v (during %s)", firstLine(err.Error()), t.Name())
			}
			deadMu.Unlock()
			t.Errorf("cluster %s died during this test: %v", c.Context, err)
			return
		}
	}()
}

// health checks that every process up.sh recorded still runs, that the apiserver is
// ready, and that no istiod is in a crash loop. Its error carries the log tails that say
// why.
func (c *Cluster) health() error {
	if err := c.processesAlive(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	body, err := c.Kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("kube-apiserver /readyz: %v %s\nthe end of its log:\n%s", err, strings.TrimSpace(string(body)), c.tail("kube-apiserver", 15))
	}
	return c.istiodCrashLoops(ctx)
}

// processesAlive checks every pid file up.sh (or RestartComponent) wrote: the process must
// still run the binary it was started from.
func (c *Cluster) processesAlive() error {
	files, err := filepath.Glob(filepath.Join(c.stateDir(), "pids", "*.pid"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no process recorded in %s: the cluster was stopped", filepath.Join(c.stateDir(), "pids"))
	}
	sort.Strings(files)
	var errs []error
	for _, f := range files {
		component := strings.TrimSuffix(filepath.Base(f), ".pid")
		pid, exe, err := c.recordedPID(component)
		if err != nil {
			if os.IsNotExist(err) {
				continue // stopped between the glob and the read (a restart)
			}
			return err
		}
		if got, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); got != exe || zombie(pid) {
			errs = append(errs, fmt.Errorf("%s (pid %d) is not running; the end of its log:\n%s", component, pid, c.tail(component, 15)))
		}
	}
	return errors.Join(errs...)
}

// zombie says whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

// istiodCrashLoops fails when an istiod pod restarted crashLoopRestarts times and waits in
// back-off: the bed's istiods share this host, and one that cannot start (a port taken, a
// bad certificate) is the bed's fault, not the next test's.
func (c *Cluster) istiodCrashLoops(ctx context.Context) error {
	pods, err := c.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "app=istiod"})
	if err != nil {
		return fmt.Errorf("listing istiod pods: %w", err)
	}
	var errs []error
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.RestartCount >= crashLoopRestarts && waitingIn(cs, "CrashLoopBackOff") {
				errs = append(errs, fmt.Errorf("istiod pod %s/%s is in a crash loop (%d restarts); the bed's log of it:\n%s",
					p.Namespace, p.Name, cs.RestartCount, c.grep("realistiod", p.Namespace+"/"+p.Name, 20)))
			}
		}
	}
	return errors.Join(errs...)
}

func waitingIn(cs corev1.ContainerStatus, reason string) bool {
	return cs.State.Waiting != nil && cs.State.Waiting.Reason == reason
}

// tail returns the last n lines of a component's log in the cluster's state directory.
func (c *Cluster) tail(component string, n int) string {
	b, err := os.ReadFile(filepath.Join(c.stateDir(), "logs", component+".log"))
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	return indent(lastN(strings.Split(strings.TrimRight(string(b), "\n"), "\n"), n))
}

// grep returns the last n lines of a component's log from the first that mentions what.
func (c *Cluster) grep(component, what string, n int) string {
	b, err := os.ReadFile(filepath.Join(c.stateDir(), "logs", component+".log"))
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	for i, l := range lines {
		if strings.Contains(l, what) {
			return indent(lastN(lines[i:], n))
		}
	}
	return "  (no line names it)"
}

func lastN(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}

func indent(lines []string) string { return "  " + strings.Join(lines, "\n  ") }

// firstLine is the cause's first line, without the colon that leads to a log tail.
func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSuffix(strings.TrimSuffix(l, "; the end of its log:"), ":")
}
