package check

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// injector builds an Istio injector whose webhooks select namespaces by label (key=value,
// or key when the value is empty: the label exists).
func injector(name, rev string, nsSelectors ...map[string]any) *unstructured.Unstructured {
	var hooks []any
	for i, sel := range nsSelectors {
		hooks = append(hooks, map[string]any{
			"name":              []string{"a.", "b.", "c.", "d."}[i] + "sidecar-injector.istio.io",
			"namespaceSelector": sel,
			"objectSelector":    map[string]any{"matchExpressions": []any{map[string]any{"key": "sidecar.istio.io/inject", "operator": "NotIn", "values": []any{"false"}}}},
		})
	}
	u := &unstructured.Unstructured{Object: map[string]any{"webhooks": hooks}}
	u.SetAPIVersion("admissionregistration.k8s.io/v1")
	u.SetKind("MutatingWebhookConfiguration")
	u.SetName(name)
	u.SetLabels(map[string]string{"istio.io/rev": rev})
	return u
}

// revNS selects namespaces labelled istio.io/rev=rev and not istio-injection, as the
// charts do; injNS those labelled istio-injection=enabled.
func revNS(rev string) map[string]any {
	return map[string]any{"matchExpressions": []any{
		map[string]any{"key": "istio.io/rev", "operator": "In", "values": []any{rev}},
		map[string]any{"key": "istio-injection", "operator": "DoesNotExist"},
	}}
}

var injNS = map[string]any{"matchExpressions": []any{map[string]any{"key": "istio-injection", "operator": "In", "values": []any{"enabled"}}}}

var neverMatch = map[string]any{"matchLabels": map[string]any{"istio.io/deactivated": "never-match"}}

func TestInjectorOverlaps(t *testing.T) {
	defaultRev := injector("istio-sidecar-injector", "default", injNS, revNS("default"))
	deactivated := injector("istio-sidecar-injector", "default", neverMatch, neverMatch)
	for _, tc := range []struct {
		name   string
		mwc    *unstructured.Unstructured
		others []*unstructured.Unstructured
		want   []string // one result per entry, containing it
	}{
		{"a tag of its own label", injector("istio-revision-tag-prod", "canary", revNS("prod")),
			[]*unstructured.Unstructured{defaultRev}, nil},
		{"the default tag beside the active default injector",
			injector("istio-revision-tag-default", "canary", injNS, revNS("default")),
			[]*unstructured.Unstructured{defaultRev},
			[]string{"a.sidecar-injector.istio.io overlaps with others: [istio-sidecar-injector/a.sidecar-injector.istio.io]",
				"b.sidecar-injector.istio.io overlaps with others: [istio-sidecar-injector/b.sidecar-injector.istio.io]"}},
		{"the default tag beside a deactivated one",
			injector("istio-revision-tag-default", "canary", injNS),
			[]*unstructured.Unstructured{deactivated}, nil},
		{"the webhook it replaces is left out", injector("istio-revision-tag-prod", "canary", revNS("prod")),
			[]*unstructured.Unstructured{injector("istio-revision-tag-prod", "default", revNS("prod"))}, nil},
		{"a tag named like a revision", injector("istio-revision-tag-canary", "default", revNS("canary")),
			[]*unstructured.Unstructured{injector("istio-sidecar-injector-canary", "canary", revNS("canary"))},
			[]string{"istio-sidecar-injector-canary/a.sidecar-injector.istio.io"}},
		{"not Istio's", injector("istio-revision-tag-x", "canary", map[string]any{}),
			[]*unstructured.Unstructured{func() *unstructured.Unstructured {
				u := injector("other", "", map[string]any{})
				u.SetLabels(nil)
				hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
				hooks[0].(map[string]any)["name"] = "mutate.example.com"
				_ = unstructured.SetNestedSlice(u.Object, hooks, "webhooks")
				return u
			}()}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var others []unstructured.Unstructured
			for _, o := range tc.others {
				others = append(others, *o)
			}
			got, err := InjectorOverlaps(tc.mwc, others)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d results, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				r := got[i]
				if !strings.Contains(r.Message, w) || r.Code != "IST0139" || r.Passed || r.Object != "MutatingWebhookConfiguration/"+tc.mwc.GetName() {
					t.Errorf("result %d: %+v, want a failed IST0139 on %s containing %q", i, r, tc.mwc.GetName(), w)
				}
			}
		})
	}
}
