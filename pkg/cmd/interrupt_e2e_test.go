package cmd_test

import (
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestInterruptE2E sends SIGINT to install and uninstall at random points. Each stopped run
// must exit 130 (or 0 when it finished first) without leaving a webhook with failurePolicy
// Fail that calls a Service with no ready endpoint, and the next run must succeed without
// --force.
func TestInterruptE2E(t *testing.T) {
	c := cluster.Get(t)
	bin := harness.BuildIstioctl(t, "")
	home := t.TempDir()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()

	x := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig, Bin: bin, Env: []string{"HOME=" + home}}
	// interrupted starts args, sends SIGINT after a random delay within window and returns
	// the exit code and output.
	interrupted := func(window time.Duration, args ...string) (int, string) {
		t.Helper()
		p := x.Start("istioctl "+strings.Join(args, " "), args...)
		// Not before the process could install its handler: a SIGINT during the runtime's
		// start kills it before it does anything, which proves nothing.
		const start = 100 * time.Millisecond
		delay := start + time.Duration(rng.Int64N(int64(window-start)))
		time.Sleep(delay)
		_ = p.Cmd.Process.Signal(syscall.SIGINT)
		sent := time.Now()
		code := p.Wait(t, 10*time.Minute)
		t.Logf("istioctl %s: SIGINT after %v, exit %d %v later", strings.Join(args, " "), delay.Round(time.Millisecond), code, time.Since(sent).Round(time.Millisecond))
		return code, p.Out.String() + p.ErrOut.String()
	}
	mustRun := func(args ...string) string {
		t.Helper()
		start := time.Now()
		r := x.Run(args...)
		out, err := r.Output(), r.Err
		took := time.Since(start)
		t.Logf("istioctl %s: %v", strings.Join(args, " "), took.Round(time.Millisecond))
		if took > 30*time.Second {
			t.Logf("slow run's output:\n%s", out)
		}
		if err != nil {
			t.Fatalf("istioctl %s after an interrupted run: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}

	for i := range harness.FaultRuns(t, 5) {
		args := []string{"install", "-y", "--set", "profile=demo"}
		if i%2 == 1 {
			args = append(args, "-o", "json")
		}
		code, out := interrupted(1500*time.Millisecond, args...)
		if done, ok := doneOf(out); ok && done["exitCode"] != float64(code) {
			t.Errorf("run %d: exit %d, but the done event says %v", i, code, done["exitCode"])
		}
		switch code {
		case 0:
		case -1:
			// Killed by the SIGINT itself: on a loaded machine the runtime's start can outlast
			// the delay, and a run stopped before main installed its handler printed nothing
			// and wrote nothing (checked below). Any output means it was stopped later.
			if out != "" {
				t.Fatalf("run %d: install killed by SIGINT after it had started:\n%s", i, out)
			}
			t.Logf("run %d: the SIGINT came before the handler was installed", i)
		case 130:
			if !strings.Contains(out, "interrupted") || !strings.Contains(strings.ToLower(out), "run the same install again") {
				t.Errorf("run %d: an interrupted install must say so and what to do:\n%s", i, out)
			}
		default:
			t.Fatalf("run %d: install exit %d after SIGINT, want 130 or 0:\n%s", i, code, out)
		}
		harness.NoStuckWebhooks(t, c, ownership.LabelComponent)
		if out := mustRun("install", "-y", "--set", "profile=demo"); !strings.Contains(out, "✔ Installation complete") {
			t.Fatalf("run %d: the install after the interrupted one:\n%s", i, out)
		}
		mustRun("verify-install")

		code, out = interrupted(1500*time.Millisecond, "uninstall", "--purge", "-y")
		if code != 0 && code != 130 {
			t.Fatalf("run %d: uninstall exit %d after SIGINT, want 130 or 0:\n%s", i, code, out)
		}
		harness.NoStuckWebhooks(t, c, ownership.LabelComponent)
		mustRun("uninstall", "--purge", "-y")
	}
}
