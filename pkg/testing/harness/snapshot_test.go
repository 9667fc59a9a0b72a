package harness

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A Namespace differs in its snapshot only by what other writers than the record's seal set.
func TestContentHashLeavesSeals(t *testing.T) {
	ns := func(ann map[string]string, fields ...string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "istio-system"}}}
		o.SetAnnotations(ann)
		var mfs []metav1.ManagedFieldsEntry
		for i, f := range fields {
			now := metav1.Unix(int64(i), 0)
			mfs = append(mfs, metav1.ManagedFieldsEntry{Manager: "istioctl", Operation: metav1.ManagedFieldsOperationUpdate, Time: &now,
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(f)}})
		}
		o.SetManagedFields(mfs)
		return o
	}
	const seal1 = `{"f:metadata":{"f:annotations":{".":{},"f:seal.install.istio.io/istioctl-install-default-v1":{}}}}`
	const seal2 = `{"f:metadata":{"f:annotations":{"f:seal.install.istio.io/istioctl-install-default-v2":{}}}}`
	const label = `{"f:metadata":{"f:labels":{"f:a":{}}}}`
	const sealAndOther = `{"f:metadata":{"f:annotations":{"f:seal.install.istio.io/x":{},"f:other":{}}}}`
	base := contentHash(t, ns(nil))
	for _, tc := range []struct {
		name string
		o    *unstructured.Unstructured
		same bool
	}{
		{"a seal", ns(map[string]string{"seal.install.istio.io/istioctl-install-default-v1": "sha256:1"}, seal1), true},
		{"another seal, another time", ns(map[string]string{"seal.install.istio.io/istioctl-install-default-v2": "sha256:2"}, seal2, seal1), true},
		{"an annotation of another writer", ns(map[string]string{"other": "x"}), false},
		{"a label's managed fields", ns(nil, label), false},
		{"a seal's entry holding more", ns(nil, sealAndOther), false},
	} {
		if got := contentHash(t, tc.o) == base; got != tc.same {
			t.Errorf("%s: same hash %v, want %v", tc.name, got, tc.same)
		}
	}
}
