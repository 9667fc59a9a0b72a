package printer

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/tag"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
)

var (
	someTags = []tag.Description{
		{Tag: "default", Revision: "canary", Namespaces: []string{}},
		{Tag: "prod", Revision: "canary", Namespaces: []string{"app-a", "app-b"}},
	}
	someRecords = []*history.Record{
		{Number: 1, Revision: "default", Time: time.Date(2026, 11, 29, 19, 15, 27, 0, time.UTC), Action: history.ActionInstall,
			Outcome: history.Succeeded, Profile: "default", ToolVersion: "1.30.0", Spec: "spec: {}\n"},
		{Number: 2, Revision: "default", Time: time.Date(2026, 11, 29, 19, 16, 0, 0, time.UTC), Action: history.ActionRollback,
			RollbackOf: 1, Outcome: history.Failed, ToolVersion: "1.30.0", Description: "rollback to 1 failed"},
	}
)

// TestListFormats: the kubectl formats of tag list and history, as golden files.
func TestListFormats(t *testing.T) {
	for _, tc := range []struct{ name, format string }{
		{"name", "name"},
		{"jsonpath", `jsonpath={range .items[*]}{.tag}={.revision}{"\n"}{end}`},
		{"jsonpath-items", "jsonpath={.items[*].namespaces}"},
		{"jsonpath-missing", "jsonpath={.items[*].nope}"},
		{"custom-columns", "custom-columns=TAG:.tag,REVISION:{.revision},NAMESPACES:namespaces[*],NOPE:.nope"},
	} {
		t.Run("tags/"+tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Tags(&buf, someTags, Format(tc.format)); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "../../testdata/printer/tags-"+tc.name+".txt", buf.Bytes())
		})
	}
	for _, tc := range []struct{ name, format string }{
		{"name", "name"},
		{"jsonpath", `jsonpath={range .items[*]}{.revision}/{.number} {.action} {.outcome}{"\n"}{end}`},
		{"custom-columns", "custom-columns=RECORD:.number,ACTION:.action,STATUS:.outcome,OF:.rollbackOf,TIME:.time"},
		{"yaml", "yaml"},
	} {
		t.Run("history/"+tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := History(&buf, someRecords, Format(tc.format)); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "../../testdata/printer/history-"+tc.name+".txt", buf.Bytes())
		})
	}
}

// TestListFormatsEmpty: nothing for name and custom-columns, the template over no items for
// jsonpath; table, json and yaml keep upstream's line.
func TestListFormatsEmpty(t *testing.T) {
	for format, want := range map[string]string{
		"name": "", "custom-columns=TAG:.tag": "", "jsonpath={.kind}:{.items[*].tag}": "List:",
		"table": "No Istio revision tags found.\n", "json": "No Istio revision tags found.\n",
	} {
		var buf bytes.Buffer
		if err := Tags(&buf, nil, Format(format)); err != nil || buf.String() != want {
			t.Errorf("-o %s with no tags: %q, %v; want %q", format, buf.String(), err, want)
		}
	}
}

func TestListFormatsCheck(t *testing.T) {
	for _, f := range []string{"table", "json", "yaml", "name", "jsonpath={.items}", "custom-columns=A:.a,B:{.b}"} {
		if err := ListFormats.Check(Format(f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for f, msg := range map[string]string{
		"xml":                    "not supported",
		"text":                   "not supported",
		"jsonpath=":              "needs a template",
		"jsonpath={.items[":      "jsonpath",
		"custom-columns=":        "needs columns",
		"custom-columns=TAG":     `column "TAG": want HEADER:PATH`,
		"custom-columns=:.tag":   "want HEADER:PATH",
		"custom-columns=A:{.a}}": "want HEADER:PATH",
	} {
		if err := ListFormats.Check(Format(f)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", f, err, msg)
		}
	}
}
