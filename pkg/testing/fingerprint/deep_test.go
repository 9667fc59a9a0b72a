package fingerprint

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(m map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: m} }

// What Normalise drops (chart version labels, injector template text) does not change the
// digest; anything else does (a CRD's body too), and DiffLeaves names the path.
func TestDeepDigest(t *testing.T) {
	cm := func(level, chart, template string) *unstructured.Unstructured {
		return obj(map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "istio-sidecar-injector", "namespace": "istio-system",
				"labels": map[string]any{"helm.sh/chart": chart, "app": "sidecar-injector"}},
			"data": map[string]any{
				"config": "policy: enabled\ntemplates:\n  sidecar: |\n    " + template + "\n",
				"values": `{"global": {"logging": {"level": "` + level + `"}}}`,
			},
		})
	}
	crd := func(desc string) *unstructured.Unstructured {
		return obj(map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "gateways.networking.istio.io"}, "spec": map[string]any{"description": desc}})
	}
	digest := func(o *unstructured.Unstructured) string { return Digest(Normalise(o)) }
	for _, tc := range []struct {
		name string
		a, b *unstructured.Unstructured
		same bool
	}{
		{"chart version label", cm("info", "istiod-1.30.0", "x"), cm("info", "istiod-1.0.0", "x"), true},
		{"injector template text", cm("info", "c", "one"), cm("info", "c", "two"), true},
		{"a value in YAML data", cm("info", "c", "x"), cm("debug", "c", "x"), false},
		{"a CRD body", crd("ours"), crd("theirs"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := digest(tc.a) == digest(tc.b); got != tc.same {
				t.Errorf("same digest = %v, want %v", got, tc.same)
			}
			diffs := DiffLeaves(Normalise(tc.a), Normalise(tc.b))
			if (len(diffs) == 0) != tc.same {
				t.Errorf("DiffLeaves = %v", diffs)
			}
		})
	}
	want := []string{`data.values.global.logging.level: upstream "info", ours "debug"`}
	if got := DiffLeaves(Normalise(cm("info", "c", "x")), Normalise(cm("debug", "c", "x"))); !reflect.DeepEqual(got, want) {
		t.Errorf("DiffLeaves = %q, want %q", got, want)
	}
	deep := Deep([]*unstructured.Unstructured{cm("info", "c", "x")})
	if fp := deep["ConfigMap/istio-system/istio-sidecar-injector"]; fp.Digest == "" || fp.Labels["app"] != "sidecar-injector" {
		t.Errorf("Deep = %+v, want the fingerprint with its digest", fp)
	}
}
