package objdiff

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func rbacObj(kind string, body map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
		"metadata": map[string]any{"name": "istiod"}}}
	for k, v := range body {
		o.Object[k] = v
	}
	return o
}

func rule(groups, resources, verbs []any) map[string]any {
	return map[string]any{"apiGroups": groups, "resources": resources, "verbs": verbs}
}

// TestRBAC: what a restore would change in what a role or binding grants, line by line.
func TestRBAC(t *testing.T) {
	read := rule([]any{""}, []any{"secrets"}, []any{"get", "list"})
	wide := rule([]any{"*"}, []any{"*"}, []any{"*"})
	role := func(rules ...any) *unstructured.Unstructured {
		return rbacObj("ClusterRole", map[string]any{"rules": rules})
	}
	binding := func(role string, subjects ...any) *unstructured.Unstructured {
		return rbacObj("ClusterRoleBinding", map[string]any{"roleRef": map[string]any{"kind": "ClusterRole", "name": role, "apiGroup": "rbac.authorization.k8s.io"}, "subjects": subjects})
	}
	sa := func(name string) any {
		return map[string]any{"kind": "ServiceAccount", "name": name, "namespace": "istio-system"}
	}
	for _, tc := range []struct {
		name       string
		live, next *unstructured.Unstructured
		want       string
	}{
		{"the same", role(read), role(read), ""},
		{"a rule widened", role(read), role(read, wide), `+ rule apiGroups=[*] resources=[*] verbs=[*]`},
		{"a rule dropped", role(read, wide), role(read), `- rule apiGroups=[*] resources=[*] verbs=[*]`},
		{"created", nil, role(read), `+ rule apiGroups=[""] resources=[secrets] verbs=[get list]`},
		{"pruned", role(read), nil, `- rule apiGroups=[""] resources=[secrets] verbs=[get list]`},
		{"a binding pointed elsewhere, a subject added", binding("a", sa("istiod")), binding("cluster-admin", sa("istiod"), sa("x")),
			"roleRef ClusterRole a -> ClusterRole cluster-admin; + subject ServiceAccount istio-system/x"},
		{"not RBAC", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}, nil, ""},
	} {
		got, err := RBAC(tc.live, tc.next)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s := strings.Join(got, "; "); s != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, s, tc.want)
		}
	}
}
