package fingerprint

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Objects are keyed by ref's one string form: a cluster-scoped object has no empty
// namespace slot (Kind/name, not Kind//name), as the recorded fingerprints are keyed.
func TestKey(t *testing.T) {
	for _, tc := range []struct {
		kind, namespace, name, want string
	}{
		{"Deployment", "istio-system", "istiod", "Deployment/istio-system/istiod"},
		{"ClusterRole", "", "istiod-clusterrole-istio-system", "ClusterRole/istiod-clusterrole-istio-system"},
	} {
		o := &unstructured.Unstructured{}
		o.SetAPIVersion("v1")
		o.SetKind(tc.kind)
		o.SetNamespace(tc.namespace)
		o.SetName(tc.name)
		if got := Key(o); got != tc.want {
			t.Errorf("Key = %q, want %q", got, tc.want)
		}
		for name, fps := range map[string]map[string]Object{
			"Of":   Of([]*unstructured.Unstructured{o}),
			"Deep": Deep([]*unstructured.Unstructured{o}),
		} {
			if _, ok := fps[tc.want]; !ok || len(fps) != 1 {
				t.Errorf("%s keys the object other than %s: %v", name, tc.want, fps)
			}
		}
	}
}
