package history_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/rendertest"
)

// sealVariants are the values that add rules to istiod's roles (the charts' conditionals),
// each rendered on top of every profile.
var sealVariants = [][]string{
	nil,
	{"revision=canary"},
	{"values.global.istiod.enableAnalysis=true", "values.pilot.taint.enabled=true", "values.pilot.env.EXTERNAL_CA=ISTIOD_RA_KUBERNETES_API",
		"values.pilot.env.ENABLE_CLUSTER_TRUST_BUNDLE_API=true"},
}

// TestSealHolderUnwritable: the object that keeps the records' seals is of a kind no
// ServiceAccount an install creates may write. For every built-in profile (and the values
// that add rules to istiod's roles), every Role and ClusterRole a rendered binding grants to
// a ServiceAccount (istiod's among them) is read: none may create, update or patch
// history.SealResource in the core group, "*" verbs, resources and apiGroups included,
// nor impersonate anyone (which would write as someone else), nor aggregate rules it does not
// show. A binding to a role the install does not render is refused too: its rules are not
// known here.
func TestSealHolderUnwritable(t *testing.T) {
	profiles, err := spec.NewProfiles("")
	if err != nil {
		t.Fatal(err)
	}
	names, err := profiles.Names()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 10 {
		t.Fatalf("%d profiles: %v", len(names), names)
	}
	withIstiod := 0
	for _, profile := range names {
		for _, variant := range sealVariants {
			sets := append([]string{"profile=" + profile}, variant...)
			t.Run(strings.Join(sets, ","), func(t *testing.T) {
				_, ms := rendertest.Sets(t, sets...)
				objs := render.All(ms)
				bound, problems := sealWriters(t, objs)
				for _, p := range problems {
					t.Error(p)
				}
				if rendered := slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool {
					return o.GetKind() == "ServiceAccount" && isIstiod(o.GetName())
				}); rendered != bound {
					t.Errorf("istiod's ServiceAccount rendered %v, bound to a role %v: the test does not see what it may do", rendered, bound)
				}
				if bound {
					withIstiod++
				}
			})
		}
	}
	if withIstiod < 7*len(sealVariants) {
		t.Errorf("roles bound to istiod's ServiceAccount in %d renders: the test reads too little", withIstiod)
	}
}

func isIstiod(sa string) bool { return sa == "istiod" || strings.HasPrefix(sa, "istiod-") }

// TestSealWriters: the rule check itself, on rules that must be found.
func TestSealWriters(t *testing.T) {
	for _, tc := range []struct {
		rule rbacv1.PolicyRule
		bad  bool
	}{
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}}, false},
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"patch"}}, true},
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"update"}, ResourceNames: []string{"istio-system"}}, true},
		{rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"namespaces"}, Verbs: []string{"create"}}, true},
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"*"}, Verbs: []string{"update"}}, true},
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"*"}}, true},
		{rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"namespaces"}, Verbs: []string{"*"}}, false},
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces/status"}, Verbs: []string{"update"}}, false},
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}}, true},
		{rbacv1.PolicyRule{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses/status"}, Verbs: []string{"*"}}, false},
		{rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}, true},
	} {
		if got := writesSeals(tc.rule); got != tc.bad {
			t.Errorf("%+v: writes the seals %v, want %v", tc.rule, got, tc.bad)
		}
	}
}

// writesSeals says rule lets its holder write the seals' holder, or act as someone else.
func writesSeals(rule rbacv1.PolicyRule) bool {
	any := func(xs []string, want ...string) bool {
		return slices.ContainsFunc(xs, func(x string) bool { return x == "*" || slices.Contains(want, x) })
	}
	if any(rule.Verbs, "impersonate") && (any(rule.Resources, "users", "groups", "serviceaccounts", "uids") ||
		slices.ContainsFunc(rule.Resources, func(r string) bool { return strings.HasPrefix(r, "userextras") })) {
		return true
	}
	return any(rule.APIGroups, "") && any(rule.Resources, history.SealResource) && any(rule.Verbs, "create", "update", "patch")
}

// sealWriters reads the render's bindings and roles: whether a role is bound to istiod's
// ServiceAccount, and each rule (or unknown role) that could write the seals.
func sealWriters(t *testing.T, objs []*unstructured.Unstructured) (istiod bool, problems []string) {
	t.Helper()
	conv := runtime.DefaultUnstructuredConverter
	roles := map[string][]rbacv1.PolicyRule{}
	aggregates := map[string]bool{}
	var bindings []rbacv1.RoleBinding
	for _, o := range objs {
		if o.GroupVersionKind().Group != rbacv1.GroupName {
			continue
		}
		key := o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
		switch o.GetKind() {
		case "ClusterRole":
			var r rbacv1.ClusterRole
			if err := conv.FromUnstructured(o.Object, &r); err != nil {
				t.Fatal(err)
			}
			roles["ClusterRole//"+r.Name], aggregates["ClusterRole//"+r.Name] = r.Rules, r.AggregationRule != nil
		case "Role":
			var r rbacv1.Role
			if err := conv.FromUnstructured(o.Object, &r); err != nil {
				t.Fatal(err)
			}
			roles[key] = r.Rules
		case "RoleBinding", "ClusterRoleBinding":
			var b rbacv1.RoleBinding
			if err := conv.FromUnstructured(o.Object, &b); err != nil {
				t.Fatal(err)
			}
			bindings = append(bindings, b)
		}
	}
	for _, b := range bindings {
		var sas []string
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind {
				sas = append(sas, s.Namespace+"/"+s.Name)
				istiod = istiod || isIstiod(s.Name)
			}
		}
		if len(sas) == 0 {
			continue
		}
		ns := ""
		if b.RoleRef.Kind == "Role" {
			ns = b.Namespace
		}
		role := b.RoleRef.Kind + "/" + ns + "/" + b.RoleRef.Name
		rules, ok := roles[role]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s binds %s to %s, which the install does not render: its rules cannot be checked", b.Name, sas, role))
		case aggregates[role]:
			problems = append(problems, fmt.Sprintf("%s binds %s to %s, which aggregates rules this test cannot see", b.Name, sas, role))
		}
		for _, r := range rules {
			if writesSeals(r) {
				problems = append(problems, fmt.Sprintf("%s grants %s a write on %s (the records' seals): %+v", role, sas, history.SealResource, r))
			}
		}
	}
	return istiod, problems
}
