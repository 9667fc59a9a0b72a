package link

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// TestOwnName covers each source of a cluster's own name and their precedence, with the
// inputs of each caller: verify and precheck with a spec (Values), verify of what is
// installed (Objects), uninstall (Values, then each istiod Deployment alone).
func TestOwnName(t *testing.T) {
	values := func(name string) map[string]any {
		return map[string]any{"global": map[string]any{"multiCluster": map[string]any{"clusterName": name}}}
	}
	deployment := func(kind, app string, env ...any) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "discovery", "env": env}}}}}}}
		o.SetKind(kind)
		o.SetName("istiod")
		o.SetLabels(map[string]string{"app": app})
		return o
	}
	id := func(v string) any { return map[string]any{"name": "CLUSTER_ID", "value": v} }
	other := map[string]any{"name": "PILOT_TRACE_SAMPLING", "value": "1"}
	for _, tc := range []struct {
		name string
		src  NameSources
		want string
	}{
		{"nothing", NameSources{}, ""},
		{"spec names it", NameSources{Values: values("east")}, "east"},
		{"spec without multiCluster", NameSources{Values: map[string]any{"global": map[string]any{}}}, ""},
		{"spec gives the charts' default", NameSources{Values: values(DefaultClusterName)}, ""},
		{"istiod's CLUSTER_ID", NameSources{Objects: []*unstructured.Unstructured{deployment("Deployment", "istiod", other, id("east"))}}, "east"},
		{"istiod's CLUSTER_ID is the default", NameSources{Objects: []*unstructured.Unstructured{deployment("Deployment", "istiod", id(DefaultClusterName))}}, ""},
		{"istiod without CLUSTER_ID", NameSources{Objects: []*unstructured.Unstructured{deployment("Deployment", "istiod", other)}}, ""},
		{"not istiod", NameSources{Objects: []*unstructured.Unstructured{deployment("Deployment", "istio-ingressgateway", id("east"))}}, ""},
		{"not a Deployment", NameSources{Objects: []*unstructured.Unstructured{deployment("DaemonSet", "istiod", id("east"))}}, ""},
		{"the first istiod not at the default", NameSources{Objects: []*unstructured.Unstructured{
			deployment("Deployment", "istiod", id(DefaultClusterName)), deployment("Deployment", "istiod", id("west")), deployment("Deployment", "istiod", id("north"))}}, "west"},
		{"the spec before istiod", NameSources{Values: values("east"), Objects: []*unstructured.Unstructured{deployment("Deployment", "istiod", id("west"))}}, "east"},
		{"istiod when the spec gives the default", NameSources{Values: values(DefaultClusterName), Objects: []*unstructured.Unstructured{deployment("Deployment", "istiod", id("west"))}}, "west"},
		{"istiod when the spec gives none", NameSources{Values: map[string]any{}, Objects: []*unstructured.Unstructured{deployment("Deployment", "istiod", id("west"))}}, "west"},
	} {
		if got := OwnName(tc.src); got != tc.want {
			t.Errorf("%s: OwnName = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestWritten: a link Secret is ours only with the multicluster label and an apply by the
// link's field manager; a label alone, another manager, or an update by ours is not.
func TestWritten(t *testing.T) {
	secret := func(labels map[string]string, managers ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
		s := &unstructured.Unstructured{}
		s.SetAPIVersion("v1")
		s.SetKind("Secret")
		s.SetNamespace("istio-system")
		s.SetName("istio-remote-secret-cluster-2")
		s.SetLabels(labels)
		s.SetManagedFields(managers)
		return s
	}
	mc := map[string]string{ownership.LabelMultiCluster: "true", ownership.LabelFleetName: "bed"}
	ours := metav1.ManagedFieldsEntry{Manager: ownership.LinkFieldManager, Operation: metav1.ManagedFieldsOperationApply}
	kubectl := metav1.ManagedFieldsEntry{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate}
	for _, tc := range []struct {
		name string
		s    *unstructured.Unstructured
		want bool
	}{
		{"label and our apply", secret(mc, kubectl, ours), true},
		{"the fleet's label alone", secret(map[string]string{ownership.LabelFleetName: "bed"}, ours), false},
		{"another manager", secret(mc, kubectl), false},
		{"our manager, not by apply", secret(mc, metav1.ManagedFieldsEntry{Manager: ownership.LinkFieldManager, Operation: metav1.ManagedFieldsOperationUpdate}), false},
		{"no managed fields", secret(mc), false},
	} {
		if got := Written(tc.s); got != tc.want {
			t.Errorf("%s: Written = %v, want %v", tc.name, got, tc.want)
		}
	}
}
