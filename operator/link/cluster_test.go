package link

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
