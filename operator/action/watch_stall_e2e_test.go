package action_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestWatchStallDuringInstallE2E: an install with Atomic and a 2-minute readiness timeout
// talks to the cluster through a TLS proxy that holds every watch stream silent after its
// headers from the start (applies, reads and the lock's requests pass: they are no
// watches). The run names the stall (a watch-stalled event) within 30 s of its plan, judges
// readiness from reads meanwhile and succeeds: no restore starts (no restore-plan, no
// restored event, one done, no rollback or removal), and what it installed stays.
func TestWatchStallDuringInstallE2E(t *testing.T) {
	c := purged(t)
	kubeconfig, stall := harness.StalledWatchesKubeconfig(t, c)
	stall.Set(true)
	cfg := config(c)
	cfg.Kube.Kubeconfig = kubeconfig
	rec := &event.Recorder{}
	in := &action.Install{Config: cfg, Spec: spec.Options{Sets: []string{"profile=minimal"}}, ReadinessTimeout: 2 * time.Minute,
		HistoryMax: action.DefaultHistoryMax, Atomic: true, Events: rec}
	start := time.Now()
	_, err := in.Run(context.Background(), nil)
	took := time.Since(start)
	stall.Set(false)
	if err != nil {
		t.Fatalf("the install through stalled watches failed after %s: %v\nwatch-stalled: %+v", took.Round(time.Second), err, rec.Of(event.WatchStalled))
	}
	plans, stalls := rec.Of(event.Plan), rec.Of(event.WatchStalled)
	if len(plans) != 1 || len(stalls) == 0 {
		t.Fatalf("%d plan and %d watch-stalled events, want 1 and at least 1", len(plans), len(stalls))
	}
	named := stalls[0].Time.Sub(plans[0].Time)
	t.Logf("install through stalled watches: %.1f s; first stall named %.1f s after the plan: %s (%s); %d watches named",
		took.Seconds(), named.Seconds(), stalls[0].Watch, stalls[0].Message, len(stalls))
	if named > 30*time.Second {
		t.Errorf("the stall was named %s after the plan, want within 30 s", named.Round(time.Second))
	}
	for _, e := range stalls {
		if e.Watch == "" || e.LastHeard.IsZero() || e.Message == "" {
			t.Errorf("watch-stalled event without its watch, time or advice: %+v", e)
		}
	}
	if r, rs := rec.Of(event.RestorePlan), rec.Of(event.Restored); len(r)+len(rs) != 0 {
		t.Errorf("a restore started: %+v %+v", r, rs)
	}
	dones := rec.Of(event.Done)
	if len(dones) != 1 || dones[0].Result != event.RunSucceeded || dones[0].Operation == event.OperationRollback || dones[0].Operation == event.OperationUninstall {
		t.Errorf("done events %+v; want one, succeeded, no rollback or removal", dones)
	}
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(context.Background(), "istiod", metav1.GetOptions{}); err != nil {
		t.Errorf("istiod after the install: %v", err)
	}
}

// TestWatchStallDuringRevisionUpgradeE2E: revision a (minimal) injects two Deployments of a
// namespace labelled istio.io/rev=a; the upgrade to b (batches of one) talks through the TLS
// proxy, which holds every watch stream silent from the default tag's move on (b's install
// stands then; the batches come next). The batches' gate names its silent watch of that
// namespace (a watch-stalled event whose watch is in it, within 30 s) and judges the pods
// from reads meanwhile: the upgrade succeeds, both batches ready, every pod on b.
func TestWatchStallDuringRevisionUpgradeE2E(t *testing.T) {
	c := revFromA(t)
	ctx := context.Background()
	ns := harness.LabelledNamespace(t, c, map[string]string{"istio.io/rev": "a"})
	ws := []string{"Deployment/" + ns + "/w0", "Deployment/" + ns + "/w1"}
	for _, w := range ws {
		revApp(t, c, ns, strings.Split(w, "/")[2])
	}
	recOn(t, c, ws, "a")

	// The watches go silent once b's install stands: at the default tag's move to b, the
	// migration's first step.
	kubeconfig, stall := harness.StalledWatchesKubeconfig(t, c)
	rec := &event.Recorder{}
	start := time.Now()
	_, _, err := revUpgrade(ctx, c, func(a *action.RevisionUpgrade) {
		// A first list that never comes is named a stall after 10 s, per watch: the batch's
		// reads wait for that before its restarts, so the readiness timeout allows for it.
		a.Config.Kube.Kubeconfig, a.Migrate.BatchSize, a.ReadinessTimeout = kubeconfig, 1, 2*time.Minute
		a.Events = event.SinkFunc(func(e event.Event) {
			if e.Type == event.RevisionTag {
				stall.Set(true)
			}
			rec.Emit(e)
		})
	})
	stall.Set(false)
	if err != nil {
		for _, e := range rec.Events {
			t.Logf("%s %s %s %s %s %s", e.Time.Format("15:04:05.000"), e.Type, e.Component, e.Object, e.Watch, e.Message)
		}
		t.Fatalf("the upgrade through stalled watches failed after %s: %v\n%s", time.Since(start).Round(time.Second), err, messages(rec, event.Warning))
	}
	var ours []event.Event
	for _, e := range rec.Of(event.WatchStalled) {
		if strings.Contains(e.Watch, " in "+ns) {
			ours = append(ours, e)
		}
	}
	batches := rec.Of(event.Batch)
	t.Logf("upgrade through stalled watches: %.1f s, batches %v; %d stalls named, %d of the workloads' namespace",
		time.Since(start).Seconds(), revBatches(rec), len(rec.Of(event.WatchStalled)), len(ours))
	if len(batches) != 2 || batches[0].BatchResult != event.RunSucceeded || batches[1].BatchResult != event.RunSucceeded {
		t.Fatalf("batches %v, want 2 ready", revBatches(rec))
	}
	if len(ours) == 0 {
		t.Fatalf("no watch-stalled event names a watch in %s; those named: %+v", ns, rec.Of(event.WatchStalled))
	}
	tags := rec.Of(event.RevisionTag)
	if len(tags) == 0 {
		t.Fatal("no revision-tag event: the watches never went silent")
	}
	if named := ours[0].Time.Sub(tags[0].Time); named < 0 || named > 30*time.Second {
		t.Errorf("the batches' stall was named %s after the watches went silent, want within 30 s", named.Round(time.Second))
	}
	if ours[0].LastHeard.IsZero() || ours[0].Message == "" {
		t.Errorf("watch-stalled event without its time or advice: %+v", ours[0])
	}
	recOn(t, c, ws, "b")
}
