package install

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/readiness"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// renderedKinds are the group kinds some profile renders, with every component on.
func renderedKinds(t *testing.T) map[string]string {
	t.Helper()
	profs, err := spec.NewProfiles("")
	if err != nil {
		t.Fatal(err)
	}
	names, err := profs.Names()
	if err != nil {
		t.Fatal(err)
	}
	r, err := render.NewRenderer("")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, name := range names {
		for _, sets := range [][]string{
			{"profile=" + name},
			{"profile=" + name, "components.cni.enabled=true", "components.ztunnel.enabled=true", "components.egressGateways[0].enabled=true",
				"components.ingressGateways[0].enabled=true", "components.pilot.enabled=true", "components.base.enabled=true"},
		} {
			res, err := spec.Resolve(spec.Options{Sets: sets})
			if err != nil {
				t.Fatalf("%v: %v", sets, err)
			}
			ms, _, err := r.Render(res)
			if err != nil {
				t.Fatalf("%v: %v", sets, err)
			}
			for _, m := range ms {
				for _, o := range m.Objects {
					kinds[o.GroupVersionKind().GroupKind().String()] = name
				}
			}
		}
	}
	return kinds
}

// TestEveryRenderedKindHasAReadinessRule: a kind an install applies has a verdict of its
// own or is on the exists-is-enough list, which says why; otherwise a wait would call it
// ready the moment it exists without anyone having decided so.
func TestEveryRenderedKindHasAReadinessRule(t *testing.T) {
	kinds := renderedKinds(t)
	if len(kinds) < 15 {
		t.Fatalf("only %d kinds rendered: %v", len(kinds), kinds)
	}
	for kind, profile := range kinds {
		if !readiness.Known(kind) {
			t.Errorf("%s (profile %s) has neither a readiness rule nor an readiness.ExistsIsEnough entry", kind, profile)
		}
	}
	for kind, why := range readiness.ExistsIsEnough {
		if why == "" {
			t.Errorf("readiness.ExistsIsEnough[%s] says nothing", kind)
		}
		if _, ok := readiness.RuleFor(kind); ok {
			t.Errorf("%s has a rule and is on the exists-is-enough list", kind)
		}
	}
}

// TestWaitSourceFollowsRegistry: the wait watches exactly the kinds the readiness registry
// says read status, reads related objects exactly for the rules that need them, and judges
// every other kind from its apply.
func TestWaitSourceFollowsRegistry(t *testing.T) {
	all := map[string]bool{}
	for k := range renderedKinds(t) {
		all[k] = true
	}
	for _, k := range readiness.Watched() {
		all[k] = true
	}
	for k := range readiness.ExistsIsEnough {
		all[k] = true
	}
	var watched []string
	for kind := range all {
		rule, ok := readiness.RuleFor(kind)
		want := fromApply
		switch {
		case ok && rule.Watch:
			want = fromWatch
		case ok && len(rule.Related) > 0:
			want = fromRelated
		}
		if got := sourceOf(kind); got != want {
			t.Errorf("the wait judges %s from source %d, the registry says %d", kind, got, want)
		}
		if sourceOf(kind) == fromWatch {
			watched = append(watched, kind)
		}
	}
	sort.Strings(watched)
	if got, want := watched, readiness.Watched(); len(got) != len(want) {
		t.Errorf("the wait watches %v, the registry lists %v", got, want)
	}
}

func TestDeadlineNear(t *testing.T) {
	for err, want := range map[error]bool{
		fmt.Errorf("listing pods: %w", context.DeadlineExceeded):                                                true,
		errors.New("client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline"): true,
		errors.New("connection refused"):                                                                        false,
		context.Canceled:                                                                                        false,
	} {
		if got := deadlineNear(err); got != want {
			t.Errorf("deadlineNear(%v) = %v, want %v", err, got, want)
		}
	}
}

// A stalled watch is a watch-stalled event naming the watch, since when it was silent, the
// objects it missed and what to check.
func TestStallEvent(t *testing.T) {
	at := time.Date(2026, 12, 7, 22, 0, 1, 0, time.UTC)
	for _, tc := range []struct {
		stall kube.Stall
		watch string
		says  []string
	}{
		{kube.Stall{Resource: "deployments.apps", Namespace: "istio-system", Selector: "istio.io/rev=default", LastHeard: at, Missed: []string{"istio-system/istiod"}},
			"deployments.apps in istio-system (labels istio.io/rev=default)", []string{"reads answer and show 1 change(s) it never delivered", "every 1s", "proxy or load balancer"}},
		{kube.Stall{Resource: "customresourcedefinitions.apiextensions.k8s.io", LastHeard: at, FirstList: true},
			"customresourcedefinitions.apiextensions.k8s.io", []string{"never delivered its first list, yet reads answer", "re-established"}},
	} {
		e := event.Stalled(event.Event{}, tc.stall.Watch(), tc.stall.LastHeard, tc.stall.Missed, tc.stall.Advice())
		if e.Type != event.WatchStalled || e.Watch != tc.watch || !e.LastHeard.Equal(at) || len(e.Details) != len(tc.stall.Missed) {
			t.Errorf("%+v: event %+v", tc.stall, e)
		}
		for _, want := range tc.says {
			if !strings.Contains(e.Message, want) {
				t.Errorf("%+v: message %q lacks %q", tc.stall, e.Message, want)
			}
		}
	}
}
