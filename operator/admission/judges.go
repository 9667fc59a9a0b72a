package admission

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/kube"
)

// The admission layers a cluster adds: policies in CEL and webhooks. Each lists the
// requests it judges as rules of API groups, resources and operations.
var (
	validatingPolicyGVK = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"}
	mutatingPolicyGVK   = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1beta1", Kind: "MutatingAdmissionPolicy"}
	mutatingPolicyV1GVK = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingAdmissionPolicy"}
	// rulesAt is where each kind keeps its rules: under each of its webhooks, or in its
	// match constraints.
	rulesAt = map[schema.GroupVersionKind][]string{
		kube.ValidatingWebhookGVK: {"webhooks", "*", "rules"},
		kube.MutatingWebhookGVK:   {"webhooks", "*", "rules"},
		validatingPolicyGVK:       {"spec", "matchConstraints", "resourceRules"},
		mutatingPolicyGVK:         {"spec", "matchConstraints", "resourceRules"},
		mutatingPolicyV1GVK:       {"spec", "matchConstraints", "resourceRules"},
	}
)

// judgesCRDs says whether a policy or webhook of the cluster judges the creation or update
// of CustomResourceDefinitions. Without one, only the apiserver's own validation does, which
// the rendered CRDs pass (their tests prove it), quota and Pod Security do not apply to
// them, and their dry run is the dearest of the survey (the apiserver compiles each
// schema): they need not be asked. A kind the cluster does not serve judges nothing.
func judgesCRDs(ctx context.Context, c *kube.Client) (bool, error) {
	for gvk, path := range rulesAt {
		items, err := c.List(ctx, gvk, "")
		if err != nil {
			return false, err
		}
		for i := range items {
			if slices.ContainsFunc(rulesOf(items[i].Object, path), matchesCRDs) {
				return true, nil
			}
		}
	}
	return false, nil
}

// rulesOf are the rules found at path in obj, "*" standing for each item of a list.
func rulesOf(obj map[string]any, path []string) []map[string]any {
	if len(path) == 0 {
		return nil
	}
	if len(path) > 1 && path[1] == "*" {
		items, _, _ := unstructured.NestedSlice(obj, path[0])
		var out []map[string]any
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				out = append(out, rulesOf(m, path[2:])...)
			}
		}
		return out
	}
	rules, _, _ := unstructured.NestedSlice(obj, path...)
	var out []map[string]any
	for _, r := range rules {
		if m, ok := r.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// matchesCRDs says whether a rule matches creating or updating a CustomResourceDefinition
// (what an install sends).
func matchesCRDs(rule map[string]any) bool {
	has := func(field string, want ...string) bool {
		vals, _, _ := unstructured.NestedStringSlice(rule, field)
		return slices.ContainsFunc(vals, func(v string) bool { return slices.Contains(want, v) })
	}
	return has("apiGroups", "*", "apiextensions.k8s.io") &&
		has("resources", "*", "*/*", "customresourcedefinitions", "customresourcedefinitions/*") &&
		has("operations", "*", "CREATE", "UPDATE")
}
