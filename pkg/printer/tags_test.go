package printer

import (
	"bytes"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/tag"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
)

// TestTagMessages: what tag set, tag remove and an overlap print, in upstream's words.
func TestTagMessages(t *testing.T) {
	for _, tc := range []struct {
		name  string
		print func(*bytes.Buffer)
		want  string
	}{
		{"set", func(b *bytes.Buffer) { TagSet(b, "default", "canary", false) },
			`Revision tag "default" created, referencing control plane revision "canary". To enable injection using this
revision tag, use 'kubectl label namespace <NAMESPACE> istio.io/rev=default'
`},
		{"set --dry-run", func(b *bytes.Buffer) { TagSet(b, "default", "canary", true) },
			"Dry run: revision tag \"default\" would reference control plane revision \"canary\"; nothing was written\n"},
		{"dry-run changes", func(b *bytes.Buffer) {
			TagChanges(b, []tag.Change{{Object: "MutatingWebhookConfiguration/istio-revision-tag-default", Status: "would be configured"}})
		}, "  MutatingWebhookConfiguration/istio-revision-tag-default would be configured\n"},
		{"remove", func(b *bytes.Buffer) {
			TagRemoved(b, "prod", []string{"MutatingWebhookConfiguration/istio-revision-tag-prod"})
		},
			"  MutatingWebhookConfiguration/istio-revision-tag-prod removed\nRevision tag prod removed\n"},
		{"overlap", func(b *bytes.Buffer) {
			TagOverlaps(b, []check.Result{{Code: "IST0139", Object: "MutatingWebhookConfiguration/istio-revision-tag-prod",
				Message: "tag-e2e-rogue/rogue.sidecar-injector.istio.io injects the same pods"}})
		}, "creating tag would conflict, pass --skip-confirmation to proceed:\n" +
			"Error [IST0139] (MutatingWebhookConfiguration istio-revision-tag-prod) tag-e2e-rogue/rogue.sidecar-injector.istio.io injects the same pods\n"},
	} {
		var b bytes.Buffer
		tc.print(&b)
		if b.String() != tc.want {
			t.Errorf("%s printed\n%q\nwant\n%q", tc.name, b.String(), tc.want)
		}
	}
}

// TestTagListAfterMove: tag list in each format, of the tags operator/action's TestTagE2E
// leaves once the default tag moved to the canary and prod is used by a namespace.
func TestTagListAfterMove(t *testing.T) {
	tags := []tag.Description{
		{Tag: "default", Revision: "canary", Namespaces: []string{}},
		{Tag: "prod", Revision: "canary", Namespaces: []string{"tag-e2e-app"}},
	}
	for name, format := range map[string]string{
		"list":                "table",
		"list-name":           "name",
		"list-jsonpath":       `jsonpath={range .items[*]}{.tag} -> {.revision} {.namespaces}{"\n"}{end}`,
		"list-custom-columns": "custom-columns=TAG:.tag,REVISION:.revision,NAMESPACES:.namespaces[*]",
	} {
		var b bytes.Buffer
		if err := Tags(&b, tags, Format(format)); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "../../testdata/tag/"+name+".txt", b.Bytes())
	}
	var b bytes.Buffer
	if err := Tags(&b, tags, JSON); err != nil || !strings.Contains(b.String(), `"namespaces": [`+"\n\t\t\t\"tag-e2e-app\"") {
		t.Errorf("-o json: %v\n%s", err, b.String())
	}
}
