package action_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/migrate"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestAPIServerKilledInDeletingPhasesE2E, on one cluster of its own: the kube-apiserver is
// SIGKILLed at a moment chosen from a run's events (the run waits in its event sink until
// the kill is done, so the moment is exact whatever the load):
//
//   - revision-upgrade: the first batch's end (its record saved), so that the next
//     request is the second batch's first restart;
//   - uninstall: a purge's first removed event, with later removal batches to go.
//
// Each run fails naming the cluster it cannot reach (exit code 1); after the apiserver and
// its clients restart, the same command finishes: every workload on the new revision, or
// nothing istioctl installed left; and nothing else was lost (workloads, their namespaces, the
// old revision during the upgrade; every object not among the uninstall's targets).
func TestAPIServerKilledInDeletingPhasesE2E(t *testing.T) {
	c := cluster.StartPrivate(t)
	c.RequireRealIstiod(t)
	ns := harness.LabelledNamespace(t, c, map[string]string{"istio.io/rev": "a"})
	ws := []string{"Deployment/" + ns + "/w0", "Deployment/" + ns + "/w1"}

	t.Run("revision-upgrade", func(t *testing.T) {
		revMustInstall(t, c, "1.29.4", "a", "profile=minimal")
		revTag(t, c, "default", "a")
		for _, w := range ws {
			revApp(t, c, ns, strings.Split(w, "/")[2])
		}
		recOn(t, c, ws, "a")
		before := harness.Objects(t, c)
		atBatch := func(e event.Event) bool { return e.Type == event.Batch && e.BatchResult == event.RunSucceeded }
		killed := killedRun(t, c, atBatch, func(cfg *action.Config, sink event.Sink) error {
			_, _, err := revUpgrade(context.Background(), c, func(a *action.RevisionUpgrade) {
				a.Config.Kube, a.Config.Lock, a.Migrate.BatchSize, a.Events = cfg.Kube, cfg.Lock, 1, sink
			})
			return err
		})
		if !strings.Contains(killed.err.Error(), "batch 2/2") {
			t.Errorf("the killed upgrade's error does not name batch 2: %v", killed.err)
		}
		rec, err := migrate.LoadRecord(context.Background(), harness.Client(t, c), "istio-system")
		if err != nil || rec == nil || rec.Done != 1 {
			t.Errorf("the killed upgrade's record: %+v, %v; want batch 1 done", rec, err)
		}

		start := time.Now()
		events, _, err := revUpgrade(context.Background(), c, func(a *action.RevisionUpgrade) { a.Migrate.BatchSize = 1 })
		if err != nil {
			t.Fatalf("the same upgrade after the restart: %v\n%s", err, messages(events, event.Warning))
		}
		t.Logf("the same upgrade again: %v, batches %v", time.Since(start).Round(time.Millisecond), revBatches(events))
		recOn(t, c, ws, "b")
		revs := revRevisions(t, c)
		if revs["a"] == nil || revs["b"] == nil {
			t.Errorf("revisions after the upgrade: %v, want a (not pruned) and b", revs)
		}
		lostOf(t, before, harness.Objects(t, c), nil)
	})

	t.Run("uninstall", func(t *testing.T) {
		if len(revRevisions(t, c)) == 0 {
			revMustInstall(t, c, "1.30.0", "", "profile=minimal")
		}
		ctx := context.Background()
		plan, err := (&action.Uninstall{Config: config(c), Purge: true, Timeout: 2 * time.Minute}).Plan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		targets := map[string]bool{}
		for _, tg := range plan.Targets {
			targets[tg] = true
		}
		before := harness.Objects(t, c)
		atRemoved := func(e event.Event) bool { return e.Type == event.Pruned }
		killed := killedRun(t, c, atRemoved, func(cfg *action.Config, sink event.Sink) error {
			_, err := (&action.Uninstall{Config: cfg, Purge: true, Timeout: 2 * time.Minute, Events: sink}).Run(ctx, nil)
			return err
		})
		left := 0
		for id := range harness.Objects(t, c) {
			if targets[id] {
				left++
			}
		}
		if left == 0 {
			t.Errorf("the killed uninstall removed every target: the kill at %s came too late", killed.at.Object)
		}

		start := time.Now()
		rec := &event.Recorder{}
		if _, err := (&action.Uninstall{Config: config(c), Purge: true, Timeout: 2 * time.Minute, Events: rec}).Run(ctx, nil); err != nil {
			t.Fatalf("the same uninstall after the restart: %v\n%s", err, messages(rec, event.Warning))
		}
		t.Logf("the same uninstall again: %v; %d of %d targets were left by the killed one", time.Since(start).Round(time.Millisecond), left, len(targets))
		after := harness.Objects(t, c)
		for id := range targets {
			if _, ok := after[id]; ok {
				t.Errorf("%s is still there after the uninstall finished", id)
			}
		}
		for id, o := range after {
			if l := o.GetLabels(); l[ownership.LabelManaged] == "Reconcile" && l[ownership.LabelComponent] != "" {
				t.Errorf("%s, installed by istioctl, is still there after the uninstall finished", id)
			}
		}
		lostOf(t, before, after, targets)
		for _, w := range ws {
			if _, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, strings.Split(w, "/")[2], metav1.GetOptions{}); err != nil {
				t.Errorf("workload %s after the uninstall: %v", w, err)
			}
		}
	})

	t.Run("atomic-restore", func(t *testing.T) { atomicRestoreKilled(t, c) })
}

// atomicRestoreKilled: on the same cluster, an install of the default profile succeeds
// (record 1); then the same install with Atomic and an istiod pinned to a node that does not
// exist fails its readiness, and the apiserver is SIGKILLed when its restore (a re-install
// of record 1) starts its first component. The run fails naming the cluster; after the
// restart, the same failing install again fails and restores record 1 in full: istiod
// without the node selector, verify-install's spec there, nothing of before lost.
func atomicRestoreKilled(t *testing.T, c *cluster.Cluster) {
	ctx := context.Background()
	good := spec.Options{Sets: []string{"profile=default"}}
	bad := spec.Options{Sets: []string{"profile=default", "components.pilot.k8s.nodeSelector.no-such-node=x"}}
	if _, err := (&action.Install{Config: config(c), Spec: good, ReadinessTimeout: 2 * time.Minute, HistoryMax: action.DefaultHistoryMax}).Run(ctx, nil); err != nil {
		t.Fatalf("the install to restore: %v", err)
	}
	before := harness.Objects(t, c)
	restoring := false
	atRestore := func(e event.Event) bool {
		if e.Type == event.Warning && strings.Contains(e.Message, "--atomic: restoring revision") {
			restoring = true
		}
		return restoring && e.Type == event.ComponentStarted
	}
	failing := func(cfg *action.Config, sink event.Sink) error {
		_, err := (&action.Install{Config: cfg, Spec: bad, ReadinessTimeout: 6 * time.Second, HistoryMax: action.DefaultHistoryMax, Atomic: true, Events: sink}).Run(ctx, nil)
		return err
	}
	killedRun(t, c, atRestore, failing)

	start := time.Now()
	rec := &event.Recorder{}
	err := failing(config(c), rec)
	if err == nil || !strings.Contains(err.Error(), "--atomic restored revision default to record 1") {
		t.Fatalf("the same install after the restart: %v, want it failed and record 1 restored\n%s", err, messages(rec, event.Warning))
	}
	t.Logf("the same install again: %v, restored", time.Since(start).Round(time.Millisecond))
	d, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod", metav1.GetOptions{})
	if err != nil || len(d.Spec.Template.Spec.NodeSelector) != 0 {
		t.Errorf("istiod after the restore: %v, node selector %v; want record 1's, none", err, d.Spec.Template.Spec.NodeSelector)
	}
	histVerify(t, c, good.Sets...)
	lostOf(t, before, harness.Objects(t, c), nil)
}

// killed is what a run killed at its moment gave.
type killed struct {
	at  event.Event
	err error
}

// killedRun runs run with a config whose cluster lock a re-run takes over after 10 s, and
// its events into a sink that, at
// the first event at says is the moment, waits while the test kills the apiserver. The run
// must then fail naming the cluster (exit code 1), its done event last; the apiserver and
// its clients are restarted before killedRun returns.
func killedRun(t *testing.T, c *cluster.Cluster, at func(event.Event) bool, run func(*action.Config, event.Sink) error) killed {
	t.Helper()
	cfg := config(c)
	// The client's timeout as a command's: a dead apiserver refuses at once, and the run's
	// own steps before the moment must not fail on a loaded machine. The lock's lease is
	// shorter than a command's (a re-run takes the killed run's over after 10 s, not 15 s),
	// with a renew deadline near a command's (10 s), which load does not break.
	cfg.Lock = &action.LockOptions{Timeout: time.Minute, LeaseDuration: 10 * time.Second, RenewDeadline: 8 * time.Second, RetryPeriod: 500 * time.Millisecond}
	sink := &killSink{rec: &event.Recorder{}, at: at, moment: make(chan event.Event, 1), killed: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- run(cfg, sink) }()
	var k killed
	select {
	case k.at = <-sink.moment:
	case err := <-done:
		t.Fatalf("the run ended before its moment: %v\nevents: %+v", err, sink.rec.Events)
	}
	c.KillAPIServer(t)
	close(sink.killed)
	select {
	case k.err = <-done:
	case <-time.After(2 * time.Minute): // a hang, not a slow machine
		t.Fatalf("the run still runs 2 minutes after the apiserver was killed at %s %s; its goroutines:\n%s", k.at.Type, k.at.Object, ourGoroutines())
	}
	t.Logf("killed at %s %s%s; the run ended: %v", k.at.Type, k.at.Object, k.at.Message, firstLineOf(errString(k.err)))
	switch {
	case k.err == nil:
		t.Errorf("the run succeeded with its apiserver killed at %s %s", k.at.Type, k.at.Object)
	case !strings.Contains(k.err.Error(), "cannot reach the cluster at "+c.Config.Host):
		t.Errorf("the error does not name the cluster it cannot reach:\n%v", k.err)
	case event.ExitCode(k.err) != event.ExitFailed:
		t.Errorf("exit code %d, want %d: %v", event.ExitCode(k.err), event.ExitFailed, k.err)
	}
	// Its done fails, after the moment (a warning that the lock could not be released may
	// follow it).
	moment, last := -1, -1
	for i, e := range sink.rec.Events {
		if moment < 0 && at(e) {
			moment = i
		}
		if e.Type == event.Done {
			last = i
		}
	}
	if last < moment || sink.rec.Events[last].Result != event.RunFailed {
		t.Errorf("the killed run's done (event %d) is not a failure after its moment (event %d): %+v", last, moment, sink.rec.Events[max(0, last):])
	}
	c.RestartAPIServer(t)
	c.RestartAPIServerClients(t)
	return k
}

// killSink records a run's events; at the first one at says is the moment it hands it to
// the test and waits until killed is closed.
type killSink struct {
	rec    *event.Recorder
	at     func(event.Event) bool
	once   sync.Once
	moment chan event.Event
	killed chan struct{}
}

func (k *killSink) Emit(e event.Event) {
	k.rec.Emit(e)
	if !k.at(e) {
		return
	}
	first := false
	k.once.Do(func() { first = true })
	if first {
		k.moment <- e
		<-k.killed
	}
}

// lostOf fails the test for each object of before missing from after that is not among
// gone (the command's targets), in a namespace among them, or owned by one of them (garbage
// collected), and is not a pod or ReplicaSet (a restart replaces them).
func lostOf(t *testing.T, before, after map[string]*unstructured.Unstructured, gone map[string]bool) {
	t.Helper()
	var ownedByGone func(o *unstructured.Unstructured) bool
	ownedByGone = func(o *unstructured.Unstructured) bool {
		for _, or := range o.GetOwnerReferences() {
			id := ref.New(or.Kind, o.GetNamespace(), or.Name).String()
			if gone[id] || gone[ref.New(or.Kind, "", or.Name).String()] {
				return true
			}
			if owner, ok := before[id]; ok && ownedByGone(owner) {
				return true
			}
		}
		return false
	}
	for id, o := range before {
		if _, ok := after[id]; ok || gone[id] || gone["Namespace/"+o.GetNamespace()] || ownedByGone(o) || o.GetKind() == "Pod" || o.GetKind() == "ReplicaSet" {
			continue
		}
		t.Errorf("%s was lost", id)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
