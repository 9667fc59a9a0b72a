package action_test

import (
	"context"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// heldAs is what another tool's object must keep through a failed adoption: its UID, its
// labels and the managers of the object itself (manager and operation; not of its status,
// which controllers keep writing).
type heldAs struct {
	uid      string
	labels   map[string]string
	managers []string
}

// heldAsNow reads heldAs of each object (a missing one is absent from the map).
func heldAsNow(t *testing.T, client *kube.Client, objs []*unstructured.Unstructured) map[string]heldAs {
	t.Helper()
	out := map[string]heldAs{}
	for _, o := range objs {
		live, err := client.Get(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if live == nil {
			continue
		}
		var managers []string
		for _, mf := range live.GetManagedFields() {
			if m := mf.Manager + "/" + string(mf.Operation); mf.Subresource == "" && !slices.Contains(managers, m) {
				managers = append(managers, m)
			}
		}
		sort.Strings(managers)
		out[ref.Of(o).String()] = heldAs{uid: string(live.GetUID()), labels: live.GetLabels(), managers: managers}
	}
	return out
}

// TestTakeOwnershipAtomicGivesBackE2E: upstream's base and istiod charts installed with the
// helm CLI, then an install with TakeOwnership and Atomic whose istiod can never be
// scheduled, with a short readiness timeout (action.Install in process). It fails with a
// non-zero exit code, and every object of both Helm releases is still there with the same
// UID, labels and field managers as before; the restore plan event lists istiod's
// Deployment among the objects given back and none of the releases' objects among those
// removed, each object given back has its restored event, what the run created is gone,
// and helm list still shows both releases deployed.
func TestTakeOwnershipAtomicGivesBackE2E(t *testing.T) {
	c := cluster.Get(t)
	h := newHelmRun(t, c.Kubeconfig)
	client := harness.Client(t, c)
	lap := stopwatch(t)
	upstreamReleases(t, c, h, "--wait")
	objs := append(releaseObjects(t, h, client, "istio-base", "istio-system"), releaseObjects(t, h, client, "istiod", "istio-system")...)
	settledVersions(t, client, objs) // the controllers' writes (the Deployment's revision) come first
	before := heldAsNow(t, client, objs)
	if len(before) < 20 || len(before) != len(objs) {
		t.Fatalf("the Helm releases hold %d objects, %d of them live", len(objs), len(before))
	}
	lap("helm install")

	rec := &event.Recorder{}
	sets := []string{"profile=minimal", "components.pilot.k8s.nodeSelector.no-such-node=x"}
	in := &action.Install{Config: config(c), Spec: spec.Options{Sets: sets},
		ReadinessTimeout: 20 * time.Second, HistoryMax: action.DefaultHistoryMax, TakeOwnership: true, Atomic: true, Events: rec}
	_, err := in.Run(context.Background(), nil)
	if err == nil || event.ExitCode(err) == event.ExitOK {
		t.Fatalf("the adopting install whose istiod cannot be scheduled succeeded: %v", err)
	}
	lap("failed install and its restore")

	after := heldAsNow(t, client, objs)
	for name, was := range before {
		now, ok := after[name]
		switch {
		case !ok:
			t.Errorf("%s of a Helm release is gone", name)
		case now.uid != was.uid:
			t.Errorf("%s was re-created (UID %s, was %s)", name, now.uid, was.uid)
		case !reflect.DeepEqual(now.labels, was.labels):
			t.Errorf("%s labels %v, were %v", name, now.labels, was.labels)
		case !reflect.DeepEqual(now.managers, was.managers):
			t.Errorf("%s managers %v, were %v", name, now.managers, was.managers)
		}
	}

	plans := rec.Of(event.RestorePlan)
	if len(plans) != 1 {
		t.Fatalf("%d restore plan events, want 1: %+v", len(plans), rec.Events)
	}
	if !slices.Contains(plans[0].GiveBack, "Deployment/istio-system/istiod") {
		t.Errorf("the restore plan does not give back istiod: %v", plans[0].GiveBack)
	}
	for _, r := range plans[0].Remove {
		if _, ok := before[r]; ok {
			t.Errorf("the restore plan removes %s of a Helm release", r)
		}
	}
	var given []string
	for _, e := range rec.Of(event.Restored) {
		if e.RestoreOutcome != event.RestoreGivenBack {
			t.Errorf("%s: %s %s", e.Object, e.Wording(), e.Error)
		}
		given = append(given, e.Object)
	}
	if !slices.Equal(given, plans[0].GiveBack) {
		t.Errorf("restored events for %v, the plan gives back %v", given, plans[0].GiveBack)
	}
	rendered := map[string]*unstructured.Unstructured{}
	for _, o := range generate(t, sets...) {
		rendered[ref.Of(o).String()] = o
	}
	for _, r := range plans[0].Remove {
		o := rendered[r]
		if o == nil {
			t.Errorf("the restore plan removes %s, which the install does not render", r)
			continue
		}
		if live, err := client.Get(context.Background(), o); err != nil || live != nil {
			t.Errorf("%s, which the run created, is still there (%v)", r, err)
		}
	}
	if d := histDeployment(t, c, "istiod"); d == nil || len(d.Spec.Template.Spec.NodeSelector) != 0 {
		t.Errorf("istiod's Deployment not given back: %+v", d)
	}
	if got := h.releases(); got["istio-system/istio-base"] != "deployed" || got["istio-system/istiod"] != "deployed" {
		t.Errorf("helm list shows %v, want both releases deployed", got)
	}
}
