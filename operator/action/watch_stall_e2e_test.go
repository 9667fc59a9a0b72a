package action_test

import (
	"context"
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
