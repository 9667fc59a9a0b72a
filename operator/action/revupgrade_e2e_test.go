package action_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/migrate"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// revTo is the version revision b is installed at: an istioctl at 1.31.0 upgrading a
// 1.29.4 revision (two minors: allowed beside it, not in place).
const revTo = "1.31.0"

// revUpgrade is upgrade --strategy revision --to-revision b --relabel --batch-size 5
// --set profile=minimal -y --readiness-timeout 20s, changed by mod; it returns the run's
// events, result and error.
func revUpgrade(ctx context.Context, c *cluster.Cluster, mod func(*action.RevisionUpgrade)) (*event.Recorder, migrate.Result, error) {
	rec := &event.Recorder{}
	a := &action.RevisionUpgrade{Config: revConfig(c, revTo),
		Spec:             spec.Options{Sets: []string{"profile=minimal"}, Revision: "b", Version: revTo},
		Migrate:          action.MigrateOptions{BatchSize: 5, Relabel: true},
		ReadinessTimeout: 20 * time.Second, HistoryMax: action.DefaultHistoryMax, Events: rec}
	if mod != nil {
		mod(a)
	}
	res, err := a.Run(ctx, nil)
	return rec, res, err
}

// revBatches are a run's batch events, each as "batch i/n outcome".
func revBatches(rec *event.Recorder) []string {
	var out []string
	for _, e := range rec.Of(event.Batch) {
		n, _, _ := strings.Cut(e.Message, ":")
		out = append(out, n+" "+string(e.BatchResult))
	}
	return out
}

// revDone checks a run's done event: its operation, outcome and message.
func revDone(t *testing.T, what string, rec *event.Recorder, op event.Operation, msg string) {
	t.Helper()
	if d := lastDone(t, rec); d.Operation != op || d.Result != event.RunSucceeded || d.Message != msg {
		t.Errorf("%s: done %s %s %q, want %s succeeded %q", what, d.Operation, d.Result, d.Message, op, msg)
	}
}

// TestRevisionUpgradeE2E: 20 Deployments (replicas 1) in 4 namespaces (the default tag, a
// named tag, istio.io/rev=a, istio-injection=enabled), injected by revision a (installed
// as 1.29.4), move to b by RevisionUpgrade in batches of 5, the real istiod injecting: a
// dry run writes nothing; cancelled once batch 1 is through, the run stops in batch 2
// (interrupted, exit code 130) and the same upgrade resumes it without restarting batch 1;
// a workload that cannot be scheduled stops it in batch 3, naming it; after fixing it the
// same upgrade completes, every pod injected by b; Rollback returns every pod to a;
// PruneOld is refused while a pod uses a and removes a once none does.
func TestRevisionUpgradeE2E(t *testing.T) {
	c := purged(t)
	c.RequireRealIstiod(t)
	ctx := context.Background()
	t.Cleanup(func() {
		_ = c.Kube.CoreV1().ConfigMaps("istio-system").Delete(ctx, "istio-revision-upgrade", metav1.DeleteOptions{})
	})
	start := time.Now()
	step := func(what string) { t.Logf("%s: %v", what, time.Since(start).Round(100*time.Millisecond)) }

	revMustInstall(t, c, "1.29.4", "a", "profile=minimal")
	step("installed a")
	revTag(t, c, "default", "a")
	revTag(t, c, "prod", "a")
	nss := []string{
		harness.LabelledNamespace(t, c, map[string]string{"istio.io/rev": "default"}),
		harness.LabelledNamespace(t, c, map[string]string{"istio.io/rev": "prod"}),
		harness.LabelledNamespace(t, c, map[string]string{"istio.io/rev": "a"}),
		harness.LabelledNamespace(t, c, map[string]string{"istio-injection": "enabled"}),
	}
	direct := nss[2]
	var all []string // Deployment/ns/name, as the batches order them
	for _, ns := range nss {
		for i := range 5 {
			name := fmt.Sprintf("w%d", i)
			revApp(t, c, ns, name)
			all = append(all, ref.New("Deployment", ns, name).String())
		}
	}
	sort.Strings(all)
	batch := func(i int) []string { return all[5*i : 5*i+5] }
	step("20 workloads on a")
	revAllOn(t, c, nss, "a")

	// A dry run writes nothing: no revision b, no record, the labels as they were.
	rec, _, err := revUpgrade(ctx, c, func(a *action.RevisionUpgrade) { a.DryRun = true })
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if p := rec.Of(event.Plan); len(p) != 1 || !strings.Contains(p[0].Message, "revision a -> b: 20 workloads in 4 batches") ||
		!strings.Contains(strings.Join(p[0].Details, "\n"), "Namespace/"+direct+": label istio.io/rev=a -> b") {
		t.Errorf("the dry run's plan does not say the move and the relabel: %+v", p)
	}
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod-b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dry run created istiod-b: %v", err)
	}
	if _, err := c.Kube.CoreV1().ConfigMaps("istio-system").Get(ctx, "istio-revision-upgrade", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dry run wrote the progress record: %v", err)
	}
	step("dry run")
	revAllOn(t, c, nss, "a")

	// The workload of batch 3 cannot be scheduled.
	broken := strings.Split(batch(2)[0], "/")
	revSetNodeSelector(t, c, broken[1], broken[2], map[string]string{"no-such-node": "x"})

	// Cancelled (as Ctrl-C cancels the command's context) once batch 1 is through: the run
	// stops in batch 2, interrupted.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	rec, _, err = revUpgrade(runCtx, c, func(a *action.RevisionUpgrade) {
		inner := a.Events
		a.Events = event.SinkFunc(func(e event.Event) {
			inner.Emit(e)
			if e.Type == event.Batch && e.BatchResult == event.RunSucceeded {
				cancel()
			}
		})
	})
	if code := event.ExitCode(err); code != event.ExitInterrupted || !errors.Is(err, context.Canceled) {
		t.Fatalf("the interrupted run ended with %v (exit code %d), want interrupted (130)", err, code)
	}
	if d := lastDone(t, rec); d.Result != event.RunInterrupted || d.ExitCode == nil || *d.ExitCode != event.ExitInterrupted {
		t.Errorf("the interrupted run's done event: %+v", d)
	}
	step("interrupted")
	first := revUIDs(t, c, batch(0))
	for _, w := range batch(0) {
		if got := revPodsOf(t, c, w); got[0].rev != "b" {
			t.Errorf("%s is on %s after batch 1", w, got[0].rev)
		}
	}

	// The same upgrade resumes: batch 1 is not restarted, batch 3 stops on the broken one.
	// (a shorter wait: batch 3 cannot pass it)
	rec, _, err = revUpgrade(ctx, c, func(a *action.RevisionUpgrade) { a.ReadinessTimeout = 8 * time.Second })
	if err == nil {
		t.Fatal("the run with an unschedulable workload in batch 3 succeeded")
	}
	for _, want := range []string{"batch 3/4", batch(2)[0], "unschedulable"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if p := rec.Of(event.Plan); len(p) != 1 || !strings.Contains(p[0].Message, "(resumed: 1 of 4 batches done)") {
		t.Errorf("the resumed run's plan: %+v", p)
	}
	if got := revBatches(rec); !slices.Equal(got, []string{"batch 2/4 succeeded", "batch 3/4 failed"}) {
		t.Errorf("the resumed run's batches: %v", got)
	}
	if now := revUIDs(t, c, batch(0)); !maps.Equal(now, first) {
		t.Errorf("batch 1 was restarted again by the resumed run: pods %v, then %v", first, now)
	}
	for _, w := range batch(3) {
		if got := revPodsOf(t, c, w); got[0].rev != "a" {
			t.Errorf("%s (batch 4) moved to %s although batch 3 failed", w, got[0].rev)
		}
	}
	step("stopped at batch 3")

	// Fixed, the same upgrade completes, an event per batch.
	revSetNodeSelector(t, c, broken[1], broken[2], nil)
	rec, res, err := revUpgrade(ctx, c, nil)
	if err != nil {
		t.Fatalf("the completing run: %v", err)
	}
	if got := revBatches(rec); !slices.Equal(got, []string{"batch 3/4 succeeded", "batch 4/4 succeeded"}) ||
		!strings.HasPrefix(rec.Of(event.Batch)[1].Message, "batch 4/4: 5 workloads ready on revision b") {
		t.Errorf("the completing run's batches: %v\n%s", got, messages(rec, event.Batch))
	}
	revDone(t, "the completing run", rec, event.OperationUpgrade, "revision a -> b: 2 batches, 5 workloads restarted")
	if res != (migrate.Result{Finished: 2, Restarted: 5}) {
		t.Errorf("the completing run's result: %+v", res)
	}
	revAllOn(t, c, nss, "b")
	revs := revRevisions(t, c)
	if a := revs["a"]; a == nil || len(a.Workloads) != 0 || len(a.Namespaces) != 0 || len(a.Tags) != 0 || a.Namespace == "" {
		t.Errorf("revision a after the move: %+v; want its istiod and nothing using it", a)
	}
	if b := revs["b"]; b == nil || strings.Join(b.Tags, ",") != "default,prod" || len(b.Namespaces) != 4 {
		t.Errorf("revision b after the move: %+v; want tags default,prod and all 4 namespaces", b)
	}
	step("completed")

	// Rollback returns every pod to a, the tags and the label with them; with
	// MaxUnavailable 2 at most two workloads of a batch are restarting at any time.
	since := time.Now()
	rec, res, err = revUpgrade(ctx, c, func(a *action.RevisionUpgrade) {
		a.Spec.Sets, a.Rollback = nil, true
		a.Migrate = action.MigrateOptions{BatchSize: 5, MaxUnavailable: 2}
	})
	if err != nil {
		t.Fatalf("the rollback: %v", err)
	}
	revDone(t, "the rollback", rec, event.OperationRollback, "revision a: 4 batches, 20 workloads restarted")
	if res != (migrate.Result{Finished: 4, Restarted: 20}) {
		t.Errorf("the rollback's result: %+v", res)
	}
	if n := revRestartsInFlight(t, c, since); n != 2 {
		t.Errorf("with MaxUnavailable 2, at most %d workloads were restarting at once, want 2", n)
	}
	revAllOn(t, c, nss, "a")
	if a := revRevisions(t, c)["a"]; a == nil || strings.Join(a.Tags, ",") != "default,prod" || len(a.Namespaces) != 4 {
		t.Errorf("revision a after the rollback: %+v", a)
	}
	step("rolled back")

	// PruneOld is refused while pods use a (a first subset moved), then removes it.
	_, _, err = revUpgrade(ctx, c, func(a *action.RevisionUpgrade) { a.Migrate.Namespaces, a.PruneOld = []string{nss[3]}, true })
	if err == nil || !strings.Contains(err.Error(), "revision a is still used") {
		t.Fatalf("PruneOld with pods on a: %v", err)
	}
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod-a", metav1.GetOptions{}); err != nil {
		t.Fatalf("istiod-a went while pods used it: %v", err)
	}
	step("prune refused")
	if _, _, err := revUpgrade(ctx, c, func(a *action.RevisionUpgrade) { a.PruneOld = true }); err != nil {
		t.Fatalf("PruneOld once every pod can move: %v", err)
	}
	revAllOn(t, c, nss, "b")
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("istiod-a after PruneOld: %v", err)
	}
	if a, ok := revRevisions(t, c)["a"]; ok {
		t.Errorf("revision a still listed after PruneOld: %+v", a)
	}
	step("pruned")
}
