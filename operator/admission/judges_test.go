package admission

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/operator/kube"
)

// TestJudgesCRDs: which policies' and webhooks' rules judge an install's CRDs.
func TestJudgesCRDs(t *testing.T) {
	for _, tc := range []struct {
		name string
		gvk  string
		obj  string
		want bool
	}{
		{"istiod's validator", "vwh", `webhooks: [{name: v, rules: [{apiGroups: [networking.istio.io], resources: ["*"], operations: [CREATE, UPDATE]}]}]`, false},
		{"a webhook on everything", "vwh", `webhooks: [{name: a, rules: [{apiGroups: [""], resources: [pods], operations: [CREATE]}]}, {name: b, rules: [{apiGroups: ["*"], resources: ["*"], operations: ["*"]}]}]`, true},
		{"a webhook on CRDs", "mwh", `webhooks: [{name: a, rules: [{apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], operations: [UPDATE]}]}]`, true},
		{"a webhook on deleting CRDs", "mwh", `webhooks: [{name: a, rules: [{apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], operations: [DELETE]}]}]`, false},
		{"a webhook on CRDs' status", "vwh", `webhooks: [{name: a, rules: [{apiGroups: ["*"], resources: ["*/*"], operations: [CREATE]}]}]`, true},
		{"a policy on pods", "vap", `spec: {matchConstraints: {resourceRules: [{apiGroups: [""], resources: [pods], operations: [CREATE]}]}}`, false},
		{"a policy on CRDs", "vap", `spec: {matchConstraints: {resourceRules: [{apiGroups: ["*"], resources: [customresourcedefinitions], operations: ["*"]}]}}`, true},
		{"a policy without rules", "vap", `spec: {matchConstraints: {}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gvk := map[string]schema.GroupVersionKind{"vwh": kube.ValidatingWebhookGVK, "mwh": kube.MutatingWebhookGVK, "vap": validatingPolicyGVK}[tc.gvk]
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(tc.obj), &obj); err != nil {
				t.Fatal(err)
			}
			got := false
			for _, r := range rulesOf(obj, rulesAt[gvk]) {
				got = got || matchesCRDs(r)
			}
			if got != tc.want {
				t.Errorf("judges CRDs: %v, want %v", got, tc.want)
			}
		})
	}
}
