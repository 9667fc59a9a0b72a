package render_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/istioctl-installer/istioctl/operator/objdiff"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
)

// TestGoldenRBAC pins, per profile, every rule each ClusterRole and Role grants and every
// binding's roleRef and subjects (testdata/rbac/<profile>.txt), so a chart or values change
// that widens what Istio may do shows up as its own small diff in review instead of hiding
// in the full manifests. Wildcards are counted in each file's header.
func TestGoldenRBAC(t *testing.T) {
	profiles := 0
	for _, tc := range cases {
		if tc.name == "default-revision-canary" {
			continue // the default profile under another name: the same rules
		}
		profiles++
		t.Run(tc.name, func(t *testing.T) {
			out, err := rbacSummary(renderSets(t, tc.sets))
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("../../testdata/rbac", tc.name+".txt"), []byte(out))
		})
	}
	if profiles != 10 {
		t.Errorf("%d profiles pinned, want the 10 upstream has", profiles)
	}
}

// rbacSummary prints the RBAC objects among objs, one rule or subject a line, in render
// order. Decoding into the rbac/v1 types rejects fields the summary would not show.
func rbacSummary(objs []*unstructured.Unstructured) (string, error) {
	var body strings.Builder
	counts := map[string]int{}
	wildcards := 0
	rules := func(rs []rbacv1.PolicyRule) {
		for i, line := range objdiff.RuleLines(rs) {
			r := rs[i]
			mark := ""
			if slices.Contains(r.Verbs, "*") || slices.Contains(r.Resources, "*") || slices.Contains(r.APIGroups, "*") {
				mark = "  # wildcard"
				wildcards++
			}
			fmt.Fprintf(&body, "  %s%s\n", line, mark)
		}
	}
	binding := func(ref rbacv1.RoleRef, subjects []rbacv1.Subject) {
		fmt.Fprintf(&body, "  roleRef %s %s (%s)\n", ref.Kind, ref.Name, ref.APIGroup)
		for _, s := range subjects {
			who := s.Name
			if s.Namespace != "" {
				who = s.Namespace + "/" + s.Name
			}
			fmt.Fprintf(&body, "  subject %s %s", s.Kind, who)
			if s.APIGroup != "" {
				fmt.Fprintf(&body, " (%s)", s.APIGroup)
			}
			body.WriteString("\n")
		}
	}
	for _, o := range objs {
		if o.GroupVersionKind().Group != rbacv1.GroupName {
			continue
		}
		kind := o.GetKind()
		counts[kind]++
		name := o.GetName()
		if ns := o.GetNamespace(); ns != "" {
			name = ns + "/" + name
		}
		fmt.Fprintf(&body, "%s %s\n", kind, name)
		conv := runtime.DefaultUnstructuredConverter
		switch kind {
		case "ClusterRole":
			var r rbacv1.ClusterRole
			if err := conv.FromUnstructuredWithValidation(o.Object, &r, true); err != nil {
				return "", fmt.Errorf("%s: %w", name, err)
			}
			rules(r.Rules)
			if r.AggregationRule != nil {
				for _, sel := range r.AggregationRule.ClusterRoleSelectors {
					fmt.Fprintf(&body, "  aggregates %v %v\n", sel.MatchLabels, sel.MatchExpressions)
				}
			}
		case "Role":
			var r rbacv1.Role
			if err := conv.FromUnstructuredWithValidation(o.Object, &r, true); err != nil {
				return "", fmt.Errorf("%s: %w", name, err)
			}
			rules(r.Rules)
		case "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			if err := conv.FromUnstructuredWithValidation(o.Object, &b, true); err != nil {
				return "", fmt.Errorf("%s: %w", name, err)
			}
			binding(b.RoleRef, b.Subjects)
		case "RoleBinding":
			var b rbacv1.RoleBinding
			if err := conv.FromUnstructuredWithValidation(o.Object, &b, true); err != nil {
				return "", fmt.Errorf("%s: %w", name, err)
			}
			binding(b.RoleRef, b.Subjects)
		default:
			return "", fmt.Errorf("%s %s: an RBAC kind this summary does not know", kind, name)
		}
	}
	header := fmt.Sprintf("# %d ClusterRoles, %d ClusterRoleBindings, %d Roles, %d RoleBindings; %d rules with a wildcard\n",
		counts["ClusterRole"], counts["ClusterRoleBinding"], counts["Role"], counts["RoleBinding"], wildcards)
	return header + body.String(), nil
}
