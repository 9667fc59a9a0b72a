package printer

import (
	"bytes"
	"testing"

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
