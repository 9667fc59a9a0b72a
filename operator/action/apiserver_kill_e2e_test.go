package action_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/kubeflags"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// killClientTimeout is the client timeout of the runs whose apiserver is killed, and
// killHangSlack what a run may take beyond it to end: more is a hang.
const (
	killClientTimeout = 2 * time.Second
	killHangSlack     = 10 * time.Second
)

// TestAPIServerKilledDuringInstallE2E, on a cluster of its own: install moves between the
// default and demo profiles (applies, waits, prunes the egress gateway), and at a random
// one of its events (0: before the first) the kube-apiserver is SIGKILLed. The install must
// fail with an error that says the cluster cannot be reached, within the client timeout
// (plus slack) of the kill, not hang. After the apiserver restarts (and its clients with
// it: cluster.RestartAPIServerClients), the same install converges: verify-install passes,
// no webhook in the cluster calls a Service without a ready endpoint with failurePolicy
// Fail, and no object was lost: everything that was there before the run still is, except
// what the run's spec prunes (and what those owned); two decoys (not ours) survive every
// run.
//
// ISTIOCTL_FAULT_RUNS=N runs N kills instead of 5.
func TestAPIServerKilledDuringInstallE2E(t *testing.T) {
	runs := harness.FaultRuns(t, 5)
	c := cluster.StartPrivate(t)
	ctx := context.Background()
	seed := harness.FaultSeed(t, uint64(time.Now().UnixNano()))
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d (%s=%d repeats the kill points)", seed, harness.EnvFaultSeed, seed)
	// Only the runs killed use the short client timeout (what bounds their end); the others
	// keep the default, so a loaded machine's slow answer is no failure of theirs.
	cfg := func(timeout time.Duration) *action.Config {
		cfg := config(c)
		cfg.Kube.Timeout = timeout
		// A killed run cannot release the cluster lock: with a short lease the next install
		// takes it over after 3 s rather than 15 s.
		cfg.Lock = &action.LockOptions{Timeout: time.Minute, LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 300 * time.Millisecond}
		return cfg
	}
	installer := func(profile string, timeout time.Duration, sink event.Sink) *action.Install {
		return &action.Install{Config: cfg(timeout), Spec: spec.Options{Sets: []string{"profile=" + profile}}, ReadinessTimeout: 2 * time.Minute, Events: sink}
	}
	profiles := []string{"default", "demo"}
	rendered := map[string]map[string]bool{}
	for _, p := range profiles {
		ms, err := (&action.ManifestGenerate{Config: config(c), Spec: spec.Options{Sets: []string{"profile=" + p}}}).Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := render.ParseObjects(ms[0].YAML.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		rendered[p] = map[string]bool{}
		for _, o := range objs {
			rendered[p][ref.Of(o).String()] = true
		}
	}

	// How many events an install of each profile emits (one per object applied, changed or
	// not, plus the components'): kills land at a random one of them.
	events := map[string]int{}
	converge := func(profile string) {
		t.Helper()
		rec := &event.Recorder{}
		if _, err := installer(profile, kubeflags.DefaultTimeout, rec).Run(ctx, nil); err != nil {
			t.Fatalf("install of %s did not converge: %v", profile, err)
		}
		events[profile] = len(rec.Events)
	}
	converge("default")
	events["demo"] = events["default"]
	// Decoys: not ours, so no install or prune may touch them.
	decoys := []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "decoy-unlabelled", Namespace: "istio-system"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "decoy-other-revision", Namespace: "istio-system", Labels: map[string]string{
			ownership.LabelManaged: "Reconcile", ownership.LabelComponent: "Pilot", ownership.LabelRevision: "canary",
			ownership.LabelOwnerNamespace: "istio-system"}}},
	}
	for _, d := range decoys {
		if _, err := c.Kube.CoreV1().ConfigMaps(d.Namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	injected, lost := 0, 0
	var slowest time.Duration
	var positions []string
	for i := range runs {
		target := profiles[(i+1)%2]
		before := harness.Objects(t, c)
		// Kill at a random event of the run (0: before the first).
		killAt := int64(rng.IntN(events[target]))
		var seen atomic.Int64
		rec := &event.Recorder{}
		done := make(chan error, 1)
		go func() {
			_, err := installer(target, killClientTimeout, killCounter{rec, &seen}).Run(ctx, nil)
			done <- err
		}()
		var err error
		finished := false
		started := time.Now()
		for !finished && seen.Load() < killAt {
			select {
			case err = <-done:
				finished = true
			case <-time.After(time.Millisecond):
			}
		}
		delay := time.Since(started)
		at := seen.Load()
		c.KillAPIServer(t)
		killed := time.Now()
		if !finished {
			select {
			case err = <-done:
			case <-time.After(killClientTimeout + killHangSlack):
				t.Fatalf("run %d: install still runs %s after the apiserver was killed (%d events in): a hang; its goroutines:\n%s",
					i, killClientTimeout+killHangSlack, at, ourGoroutines())
			}
			if d := time.Since(killed); d > slowest {
				slowest = d
			}
		}
		switch {
		case finished:
			t.Logf("run %d (%s): install finished (%d events) before the kill at event %d", i, target, at, killAt)
		case err == nil:
			// The kill came after the last request: a fault nobody saw.
			t.Logf("run %d (%s): the kill at %s (%d events) came after install's last request", i, target, delay.Round(time.Millisecond), at)
		default:
			injected++
			positions = append(positions, fmt.Sprintf("%s@%d/%s", target, at, delay.Round(time.Millisecond)))
			msg := err.Error()
			if !strings.Contains(msg, "cannot reach the cluster at "+c.Config.Host) {
				t.Errorf("run %d: the error does not say the cluster is unreachable:\n%s\nevents: %+v", i, msg, rec.Events)
			}
			if code := event.ExitCode(err); code != event.ExitFailed {
				t.Errorf("run %d: exit code %d, want %d: %v", i, code, event.ExitFailed, err)
			}
			t.Logf("run %d (%s): killed at %s, %d events in; install failed %s later: %s", i, target,
				delay.Round(time.Millisecond), at, time.Since(killed).Round(time.Millisecond), firstLineOf(msg))
		}

		c.RestartAPIServer(t)
		// Its clients (controllers, scheduler, kwok) restart too, so their watch backoff,
		// which grows with every outage, does not make each re-run wait longer.
		c.RestartAPIServerClients(t)
		converge(target)
		// The test's own restart of kwok can leave a pod not ready for a moment (seen once in
		// ~15 runs): a failure that lasts is one, a blip is logged.
		harness.Eventually(t, 10*time.Second, "verify-install after the re-run", func() (bool, string) {
			res, err := action.Verify(config(c)).Run(ctx)
			switch {
			case err != nil:
				return false, err.Error()
			case res.Failed:
				var failed []string
				for _, r := range res.Report.Results {
					if !r.Passed {
						failed = append(failed, fmt.Sprintf("%+v", r))
					}
				}
				return false, strings.Join(failed, "\n")
			}
			return true, ""
		})
		harness.NoStuckWebhooks(t, c, "")
		after := harness.Objects(t, c)
		for id, o := range before {
			if _, ok := after[id]; ok {
				continue
			}
			if prunedBy(o, rendered[target], before) {
				continue
			}
			lost++
			t.Errorf("run %d: %s was lost", i, id)
		}
	}
	for _, d := range decoys {
		if _, err := c.Kube.CoreV1().ConfigMaps(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("decoy %s: %v", d.Name, err)
		}
	}
	if injected == 0 {
		t.Errorf("no kill landed inside an install in %d runs", runs)
	}
	t.Logf("%d runs, %d apiserver kills inside an install, slowest kill→exit %s, objects lost: %d; kills at (profile@events/delay) %s",
		runs, injected, slowest.Round(time.Millisecond), lost, strings.Join(positions, " "))
}

// killCounter records a run's events and counts them as they come: where a kill lands.
type killCounter struct {
	rec  *event.Recorder
	seen *atomic.Int64
}

func (k killCounter) Emit(e event.Event) {
	k.rec.Emit(e)
	k.seen.Add(1)
}

// ourGoroutines returns the stacks of the goroutines running this module's code: where a
// hung install waits.
func ourGoroutines() string {
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
	var out []string
	for _, g := range strings.Split(b.String(), "\n\n") {
		if strings.Contains(g, "istioctl-installer/istioctl/operator") && !strings.Contains(g, "TestAPIServerKilled") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// prunedBy says o may be gone after an install of a spec rendering want: it is ours and
// not rendered (pruned), or something a pruned object owned (garbage collected).
func prunedBy(o *unstructured.Unstructured, want map[string]bool, before map[string]*unstructured.Unstructured) bool {
	l := o.GetLabels()
	if l[ownership.LabelManaged] == "Reconcile" && l[ownership.LabelComponent] != "" && l[ownership.LabelRevision] == "default" &&
		!want[ref.Of(o).String()] {
		return true
	}
	for _, or := range o.GetOwnerReferences() {
		if owner, ok := before[ref.New(or.Kind, o.GetNamespace(), or.Name).String()]; ok && prunedBy(owner, want, before) {
			return true
		}
	}
	return false
}
