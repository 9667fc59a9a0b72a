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
