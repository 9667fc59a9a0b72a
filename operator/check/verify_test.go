package check

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDiffInto(t *testing.T) {
	for _, tc := range []struct {
		name       string
		kind       string
		want, live map[string]any
		diffs      []string // substrings, one per expected diff line group
	}{
		{"equal", "ConfigMap", map[string]any{"data": map[string]any{"a": "1"}}, map[string]any{"data": map[string]any{"a": "1", "b": "2"}}, nil},
		{"changed value", "ConfigMap", map[string]any{"data": map[string]any{"a": "1"}}, map[string]any{"data": map[string]any{"a": "2"}}, []string{`- data.a: "1"`}},
		{"missing field", "ConfigMap", map[string]any{"data": map[string]any{"a": "1"}}, map[string]any{"data": map[string]any{}}, []string{"data.a"}},
		{"quantities", "Deployment", map[string]any{"cpu": "2000m", "mem": "1024Mi"}, map[string]any{"cpu": "2", "mem": "1Gi"}, nil},
		{"different quantities", "Deployment", map[string]any{"cpu": "2000m"}, map[string]any{"cpu": "3"}, []string{"cpu"}},
		{"dropped empty values", "Deployment", map[string]any{"value": "", "n": int64(0), "b": false, "m": map[string]any{}}, map[string]any{}, nil},
		{"null in the spec", "Service", map[string]any{"metadata": map[string]any{"annotations": nil}}, map[string]any{"metadata": map[string]any{"annotations": map[string]any{"x": "y"}}}, nil},
		{"list items compared in place", "Deployment", map[string]any{"l": []any{map[string]any{"name": "a", "v": "1"}}},
			map[string]any{"l": []any{map[string]any{"name": "a", "v": "1", "defaulted": true}}}, nil},
		{"a Service targetPort 0 the apiserver defaulted is not drift", "Service",
			map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(8080), "targetPort": int64(0)}}}},
			map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(8080), "targetPort": int64(8080), "protocol": "TCP"}}}}, nil},
		{"a targetPort changed live is", "Service",
			map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(443), "targetPort": int64(8443)}}}},
			map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(443), "targetPort": int64(9443)}}}}, []string{"targetPort"}},
		{"list length", "Deployment", map[string]any{"l": []any{"a"}}, map[string]any{"l": []any{"a", "b"}}, []string{"- l:"}},
		{"multi-line values as a unified diff", "ConfigMap", map[string]any{"mesh": "a: 1\nb: 2"}, map[string]any{"mesh": "a: 1\nb: 3"}, []string{"--- mesh (spec)", "-b: 2", "+b: 3"}},
		// Unless a controller took it: then kube.Yield leaves it out of the spec's side.
		{"a failure policy istioctl still owns is", "ValidatingWebhookConfiguration",
			map[string]any{"webhooks": []any{map[string]any{"failurePolicy": "Ignore"}}},
			map[string]any{"webhooks": []any{map[string]any{"failurePolicy": "Fail"}}}, []string{"failurePolicy"}},
		{"a deactivated injector's selectors are not drift", deactivatedInjector,
			map[string]any{"webhooks": []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"istio-injection": "enabled"}}}}},
			map[string]any{"webhooks": []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"istio.io/deactivated": "never-match"}}}}}, nil},
		{"an active injector's selectors are", "MutatingWebhookConfiguration",
			map[string]any{"webhooks": []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"istio-injection": "enabled"}}}}},
			map[string]any{"webhooks": []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"istio-injection": "disabled"}}}}}, []string{"namespaceSelector"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			diffInto(tc.kind, "", tc.want, tc.live, &got)
			all := strings.Join(got, "\n")
			if len(tc.diffs) == 0 && len(got) > 0 {
				t.Fatalf("want no drift, got:\n%s", all)
			}
			if len(tc.diffs) > 0 && len(got) == 0 {
				t.Fatalf("want drift containing %q, got none", tc.diffs)
			}
			for _, d := range tc.diffs {
				if !strings.Contains(all, d) {
					t.Errorf("drift lacks %q:\n%s", d, all)
				}
			}
		})
	}
}

func rankOf(kind, comp string) int {
	o := &unstructured.Unstructured{}
	o.SetKind(kind)
	o.SetLabels(map[string]string{"operator.istio.io/component": comp})
	return objectRank(o)
}

func TestReportOrderAndSummary(t *testing.T) {
	results := []Result{
		{Object: "ConfigMap/ns/values", rank: rankOf("ConfigMap", "Pilot")},
		{Object: "Deployment/ns/istio-ingressgateway", rank: rankOf("Deployment", "IngressGateways")},
		{Object: "Deployment/ns/istiod", rank: rankOf("Deployment", "Pilot")},
		{Object: "MutatingWebhookConfiguration/x", Severity: Warning, rank: rankOf("MutatingWebhookConfiguration", "Pilot")},
		{Object: "Service/ns/istiod", Passed: true},
	}
	checks := []Check{{ID: "c", Section: "S", Severity: Error,
		Run: func(context.Context, *Env) []Result { return append([]Result(nil), results...) }}}
	rep := Run(context.Background(), "verify-install", checks, &Env{})
	var order []string
	for _, r := range rep.Results {
		order = append(order, r.Object)
	}
	want := "Deployment/ns/istiod Deployment/ns/istio-ingressgateway ConfigMap/ns/values MutatingWebhookConfiguration/x Service/ns/istiod"
	if strings.Join(order, " ") != want {
		t.Errorf("order:\n got %s\nwant %s", strings.Join(order, " "), want)
	}
	if s := rep.Summary; s.Checked != 5 || s.Failed != 4 || s.Errors != 3 || s.Warnings != 1 {
		t.Errorf("summary %+v", s)
	}
	if !rep.FailedAt(Error) || !rep.FailedAt(Warning) {
		t.Error("FailedAt")
	}
	onlyWarn := &Report{Results: []Result{{Severity: Warning}}}
	if onlyWarn.FailedAt(Error) || !onlyWarn.FailedAt(Warning) {
		t.Error("a warning fails only with --fail-on warning")
	}
}

// A note (an info result that did not pass) fails nothing: it is counted apart, stays
// among the passes and fails neither --fail-on level.
func TestNotesFailNothing(t *testing.T) {
	results := []Result{
		{Object: "A", Passed: true},
		{Object: "B", Severity: Info, Message: "outside the window"},
		{Object: "C", Severity: Warning},
	}
	checks := []Check{{ID: "c", Section: "S", Severity: Error,
		Run: func(context.Context, *Env) []Result { return append([]Result(nil), results...) }}}
	rep := Run(context.Background(), "x precheck", checks, &Env{})
	var order []string
	for _, r := range rep.Results {
		order = append(order, r.Object)
	}
	if got := strings.Join(order, " "); got != "C A B" {
		t.Errorf("order %s, want the warning first, then the pass and the note by object", got)
	}
	if s := rep.Summary; s.Checked != 3 || s.Failed != 1 || s.Warnings != 1 || s.Notes != 1 {
		t.Errorf("summary %+v: the note is counted apart, not failed", s)
	}
	onlyNote := Run(context.Background(), "x precheck", []Check{{ID: "n", Severity: Error, Code: "IST0142", Hint: "upgrade",
		Run: func(context.Context, *Env) []Result { return []Result{{Object: "B", Severity: Info}} }}}, &Env{})
	if onlyNote.FailedAt(Error) || onlyNote.FailedAt(Warning) || onlyNote.Summary.Failed != 0 {
		t.Errorf("a note fails the report: %+v", onlyNote.Summary)
	}
	if r := onlyNote.Results[0]; r.Code != "" || r.Hint != "" {
		t.Errorf("a note of an error check carries the failure's code %q and hint %q", r.Code, r.Hint)
	}
	infoCheck := Run(context.Background(), "x precheck", []Check{{ID: "a", Severity: Info, Code: "IST0136",
		Run: func(context.Context, *Env) []Result { return []Result{{Object: "B"}} }}}, &Env{})
	if r := infoCheck.Results[0]; r.Code != "IST0136" || !r.Note() {
		t.Errorf("an info check's note lost its code: %+v", r)
	}
	merged := Merge("x precheck", &Report{Results: []Result{{Object: "B", Severity: Info}}}, &Report{Results: []Result{{Object: "C", Severity: Error}}})
	if merged.Results[0].Object != "C" {
		t.Errorf("merged: a note sorts before a failure: %+v", merged.Results)
	}
}

// A Secret's drift names the keys that differ, never their values (rendered or live).
func TestSecretDriftIsMasked(t *testing.T) {
	want := map[string]any{"kind": "Secret", "type": "Opaque",
		"data": map[string]any{"same": "c2FtZQ==", "changed": "b2xk", "gone": "Z29uZQ=="}}
	live := map[string]any{"kind": "Secret", "type": "kubernetes.io/tls",
		"data": map[string]any{"same": "c2FtZQ==", "changed": "bmV3", "extra": "ZXh0cmE="}}
	w, l := maskSecret(want, live)
	var got []string
	diffInto("Secret", "", w, l, &got)
	all := strings.Join(got, "\n")
	for _, value := range []string{"c2FtZQ==", "b2xk", "bmV3", "Z29uZQ==", "ZXh0cmE="} {
		if strings.Contains(all, value) {
			t.Errorf("drift shows the value %s:\n%s", value, all)
		}
	}
	for _, d := range []string{`- data.changed: "***"`, `+ data.changed: "*** (changed)"`, `- data.gone: "***"`, `- type: "Opaque"`} {
		if !strings.Contains(all, d) {
			t.Errorf("drift lacks %q:\n%s", d, all)
		}
	}
	if strings.Contains(all, "data.same") {
		t.Errorf("an unchanged key is drift:\n%s", all)
	}
	if want["data"].(map[string]any)["changed"] != "b2xk" || live["data"].(map[string]any)["changed"] != "bmV3" {
		t.Error("masking changed its input")
	}
}
