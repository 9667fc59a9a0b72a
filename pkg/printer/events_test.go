package printer

import (
	"bytes"
	"testing"
	"time"

	"github.com/fatih/color"

	"github.com/istioctl-installer/istioctl/operator/event"
)

// A retired Helm release, and one a dry run would retire, each print a line naming the
// release, then its records.
func TestHelmReleaseRetiredText(t *testing.T) {
	checkText(t, []textCase{
		{event.Event{Type: event.HelmReleaseRetired, Object: "istio-system/istiod",
			Message: "deleted its 1 release record(s); its objects are this install's", Details: []string{"Secret/istio-system/sh.helm.release.v1.istiod.v1"}},
			"✔ Helm release istio-system/istiod retired: deleted its 1 release record(s); its objects are this install's\n  Secret/istio-system/sh.helm.release.v1.istiod.v1\n"},
		{event.Event{Type: event.HelmReleaseRetired, Object: "istio-system/istio-base", DryRun: true,
			Message: "its 2 release record(s) would be deleted", Details: []string{"Secret/istio-system/sh.helm.release.v1.istio-base.v1", "Secret/istio-system/sh.helm.release.v1.istio-base.v2"}},
			"- Helm release istio-system/istio-base would be retired: its 2 release record(s) would be deleted\n  Secret/istio-system/sh.helm.release.v1.istio-base.v1\n  Secret/istio-system/sh.helm.release.v1.istio-base.v2\n"},
	})
}

// An object a delete left prints a line per object, naming it and why, whatever the view.
func TestKeptText(t *testing.T) {
	checkText(t, []textCase{
		{event.Event{Type: event.Kept, Object: "ConfigMap/istio-system/a", KeptChange: event.KeptChange{KeptReason: event.KeptOptOut}},
			"! ConfigMap/istio-system/a kept: it was opted out of pruning (owning-resource-not-pruned) after the plan read it\n"},
		{event.Event{Type: event.Kept, Object: "Service/istio-system/b", KeptChange: event.KeptChange{KeptReason: event.KeptRecreated}},
			"! Service/istio-system/b kept: it was deleted and created again by someone else after the plan read it (another UID)\n"},
		{event.Event{Type: event.Kept, Object: "Role/istio-system/c", KeptChange: event.KeptChange{KeptReason: event.KeptNotOurs}},
			"! Role/istio-system/c kept: it is no longer this install's: its labels or field managers changed after the plan read it\n"},
		{event.Event{Type: event.Kept, Cluster: "cluster-2", Message: "context cluster-2-alias is cluster-2", KeptChange: event.KeptChange{KeptReason: event.KeptSameCluster}},
			"! links kept: the context its link names is not the fleet file's, but the cluster is (the same kube-system UID)\n    context cluster-2-alias is cluster-2\n"},
	})
}

// An entry a revision upgrade left prints a line naming it and why, with what it is now.
func TestSkippedText(t *testing.T) {
	checkText(t, []textCase{
		{event.Event{Type: event.Skipped, Object: "Deployment/a/w0", SkipChange: event.SkipChange{SkipReason: event.SkipDeleted}},
			"! Deployment/a/w0 skipped: it was deleted since the revision upgrade recorded it\n"},
		{event.Event{Type: event.Skipped, Object: "Deployment/a/w1", Message: "revisions 1-29 and 1-31",
			SkipChange: event.SkipChange{SkipReason: event.SkipNotInjected}},
			"! Deployment/a/w1 skipped: none of its pods is injected by the old or the new revision anymore (revisions 1-29 and 1-31)\n"},
		{event.Event{Type: event.Skipped, Object: "Deployment/b/w0", SkipChange: event.SkipChange{SkipReason: event.SkipOutsideNamespaces}},
			"! Deployment/b/w0 skipped: it is outside --namespaces: a run without them moves it\n"},
		{event.Event{Type: event.Skipped, Object: "Namespace/c", Message: "istio.io/rev=canary now, b recorded",
			SkipChange: event.SkipChange{SkipReason: event.SkipLabelChanged}},
			"! Namespace/c skipped: its istio.io/rev label changed since the revision upgrade recorded it, so it is left as it is (istio.io/rev=canary now, b recorded)\n"},
	})
}

// In -o json a skipped event names the object, its reason as status and what it is now.
func TestSkippedJSON(t *testing.T) {
	var b bytes.Buffer
	NewEvents(&b, JSON).Emit(event.Event{Type: event.Skipped, Object: "Namespace/c", Message: "istio.io/rev=canary now, b recorded",
		SkipChange: event.SkipChange{SkipReason: event.SkipLabelChanged}})
	want := `{"time":"0001-01-01T00:00:00Z","type":"skipped","object":"Namespace/c","status":"label-changed","message":"istio.io/rev=canary now, b recorded"}` + "\n"
	if b.String() != want {
		t.Errorf("%s\nwant\n%s", b.String(), want)
	}
}

// textCase is an event and the text view's lines for it.
type textCase struct {
	e    event.Event
	want string
}

// checkText emits each case's event alone to a text view, without colours.
func checkText(t *testing.T, cases []textCase) {
	t.Helper()
	color.NoColor = true
	for _, tc := range cases {
		var b bytes.Buffer
		NewEvents(&b, Text).Emit(tc.e)
		if b.String() != tc.want {
			t.Errorf("%s %q:\n%q\nwant\n%q", tc.e.Type, tc.e.Message, b.String(), tc.want)
		}
	}
}

// In -o json a kept event names the object and its reason, as status.
func TestKeptJSON(t *testing.T) {
	var b bytes.Buffer
	NewEvents(&b, JSON).Emit(event.Event{Type: event.Kept, Object: "ConfigMap/istio-system/a", Component: "Pilot",
		KeptChange: event.KeptChange{KeptReason: event.KeptOptOut}})
	want := `{"time":"0001-01-01T00:00:00Z","type":"kept","component":"Pilot","object":"ConfigMap/istio-system/a","status":"opt-out"}` + "\n"
	if b.String() != want {
		t.Errorf("%s\nwant\n%s", b.String(), want)
	}
}

// --atomic's restore plan lists what is given back and what is removed, a line each, then
// what follows; each object given back (or left) prints a line, whatever the view.
func TestRestoreText(t *testing.T) {
	checkText(t, []textCase{
		{event.Event{Type: event.RestorePlan, Message: "then re-installs record 3", RestoreDetail: event.RestoreDetail{
			GiveBack: []string{"Deployment/istio-system/istiod"}, Remove: []string{"ConfigMap/istio-system/new"}}},
			"- --atomic restore: 1 objects given back as they were before this run, 1 removed\n" +
				"    give back Deployment/istio-system/istiod\n    remove ConfigMap/istio-system/new\n  Then re-installs record 3\n"},
		{event.Event{Type: event.RestorePlan},
			"- --atomic restore: 0 objects given back as they were before this run, 0 removed\n"},
		{event.Event{Type: event.Restored, Object: "Deployment/istio-system/istiod", Message: "Helm release istio-system/istiod",
			RestoredChange: event.RestoredChange{RestoreOutcome: event.RestoreGivenBack}},
			"  ✔ Deployment/istio-system/istiod given back to Helm release istio-system/istiod\n"},
		{event.Event{Type: event.Restored, Object: "Service/istio-system/istiod", RestoredChange: event.RestoredChange{RestoreOutcome: event.RestoreGone}},
			"  ! Service/istio-system/istiod not given back: it no longer exists (the restore never creates it again)\n"},
		{event.Event{Type: event.Restored, Object: "Role/istio-system/istiod", RestoredChange: event.RestoredChange{RestoreOutcome: event.RestoreRecreated}},
			"  ! Role/istio-system/istiod not given back: it was deleted and created again by someone else during the run (another UID)\n"},
		{event.Event{Type: event.Restored, Object: "Role/istio-system/istiod", Error: "forbidden\nmore",
			RestoredChange: event.RestoredChange{RestoreOutcome: event.RestoreFailed}},
			"  ✘ Role/istio-system/istiod not given back: forbidden\n"},
	})
}

// In -o json the restore plan carries its lists, and a restored event its outcome as status.
func TestRestoreJSON(t *testing.T) {
	var b bytes.Buffer
	sink := NewEvents(&b, JSON)
	sink.Emit(event.Event{Type: event.RestorePlan, RestoreDetail: event.RestoreDetail{GiveBack: []string{"Deployment/istio-system/istiod"}, Remove: []string{"ConfigMap/istio-system/new"}}})
	sink.Emit(event.Event{Type: event.Restored, Object: "Deployment/istio-system/istiod", Message: "Helm release istio-system/istiod",
		RestoredChange: event.RestoredChange{RestoreOutcome: event.RestoreGivenBack}})
	want := `{"time":"0001-01-01T00:00:00Z","type":"restore-plan","giveBack":["Deployment/istio-system/istiod"],"remove":["ConfigMap/istio-system/new"]}` + "\n" +
		`{"time":"0001-01-01T00:00:00Z","type":"restored","object":"Deployment/istio-system/istiod","status":"given-back","message":"Helm release istio-system/istiod"}` + "\n"
	if b.String() != want {
		t.Errorf("%s\nwant\n%s", b.String(), want)
	}
}

// A stalled watch prints one line naming the watch, how long it was silent and what to
// check, then the objects it missed, whatever the view.
func TestWatchStalledText(t *testing.T) {
	at := time.Date(2026, 12, 7, 22, 0, 12, 0, time.UTC)
	checkText(t, []textCase{
		{event.Event{Type: event.WatchStalled, Time: at, Message: "reads show what it missed; check for a proxy",
			Details:    []string{"Deployment/istio-system/istiod"},
			WatchStall: event.WatchStall{Watch: "deployments.apps in istio-system", LastHeard: at.Add(-11 * time.Second)}},
			"! watch stalled: deployments.apps in istio-system delivered nothing for 11s: reads show what it missed; check for a proxy\n    Deployment/istio-system/istiod\n"},
	})
}

// In -o json a watch-stalled event names the watch and, as since, when it last delivered.
func TestWatchStalledJSON(t *testing.T) {
	var b bytes.Buffer
	at := time.Date(2026, 12, 7, 22, 0, 12, 0, time.UTC)
	NewEvents(&b, JSON).Emit(event.Event{Type: event.WatchStalled, Time: at, Message: "m", Details: []string{"Deployment/istio-system/istiod"},
		WatchStall: event.WatchStall{Watch: "deployments.apps in istio-system", LastHeard: at.Add(-11 * time.Second)}})
	want := `{"time":"2026-12-07T22:00:12Z","type":"watch-stalled","message":"m","details":["Deployment/istio-system/istiod"],"since":"2026-12-07T22:00:01Z","watch":"deployments.apps in istio-system"}` + "\n"
	if b.String() != want {
		t.Errorf("%s\nwant\n%s", b.String(), want)
	}
}
