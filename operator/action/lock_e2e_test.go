package action_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// reads counts the GET requests of a client that are not the cluster lock's.
type reads struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (r *reads) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && !strings.Contains(req.URL.Path, "/leases/") {
		r.n.Add(1)
	}
	return r.next.RoundTrip(req)
}

func (r *reads) WrappedRoundTripper() http.RoundTripper { return r.next }

// counted is config(c) with its client's reads counted.
func counted(t *testing.T, c *cluster.Cluster) (*action.Config, *reads) {
	n := &reads{}
	cfg := config(c)
	cfg.NewClient = func() (*kube.Client, error) {
		rc := rest.CopyConfig(c.Config)
		rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { n.next = rt; return n })
		return kube.NewClientForConfig(rc, ownership.KubeOptions()...)
	}
	return cfg, n
}

// TestPlanBeforeTheLockE2E: a plan made before the lock is taken (Plan, then Run without a
// prompt) stands without a second set of reads when no other writer held the lock since
// (the Lease's resourceVersion is what the plan read); when another ran in between, Run
// plans again and stops, writing nothing, because the plan changed.
func TestPlanBeforeTheLockE2E(t *testing.T) {
	c := purged(t)
	ctx := context.Background()
	installer := func(cfg *action.Config, profile string) *action.Install {
		return &action.Install{Config: cfg, Spec: spec.Options{Sets: []string{"profile=" + profile}}, ReadinessTimeout: 2 * time.Minute}
	}

	if _, err := installer(config(c), "minimal").Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Nobody in between: a re-install planned, then run, reads nothing (but the Lease)
	// before it starts applying (its plan event): it does not plan again.
	cfg, n := counted(t, c)
	again := installer(cfg, "minimal")
	var atStart atomic.Int64
	again.Events = event.SinkFunc(func(e event.Event) {
		if e.Type == event.Plan {
			atStart.Store(n.n.Load())
		}
	})
	plan, err := again.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	planReads := n.n.Load()
	if _, err := again.Run(ctx, plan); err != nil {
		t.Fatal(err)
	}
	t.Logf("the plan read %d times; the run %d times before it applied", planReads, atStart.Load()-planReads)
	if atStart.Load() != planReads {
		t.Errorf("the run read %d times before it applied (the plan %d): it planned again with nobody in between", atStart.Load()-planReads, planReads)
	}
	// The same with a prompt (Replan): it plans again.
	again.Replan = true
	if plan, err = again.Plan(ctx); err != nil {
		t.Fatal(err)
	}
	planReads = n.n.Load()
	if _, err := again.Run(ctx, plan); err != nil {
		t.Fatal(err)
	}
	if atStart.Load()-planReads < 10 {
		t.Errorf("after a prompt the run read %d times before it applied: it did not plan again", atStart.Load()-planReads)
	}

	// Another writer in between: the plan is checked again, and it changed.
	stale := installer(config(c), "demo")
	plan, err = stale.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := installer(config(c), "default").Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	_, err = stale.Run(ctx, plan)
	var changed *action.PlanChangedError
	if !errors.As(err, &changed) || len(changed.Changes) == 0 {
		t.Fatalf("a plan made before another writer ran: %v", err)
	}
	t.Logf("the stale plan: %s", changed.Changes[0])
}
