package readiness_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/readiness"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// BenchmarkCheckDeployment judges the default profile's istiod Deployment as a wait does at
// each change of its status: go test -run '^$' -bench Check ./operator/readiness.
func BenchmarkCheckDeployment(b *testing.B) {
	res, err := spec.Resolve(spec.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r, _ := render.NewRenderer("")
	r.LazyCRDs = true
	ms, _, err := r.Render(res)
	if err != nil {
		b.Fatal(err)
	}
	var d *unstructured.Unstructured
	for _, o := range render.All(ms) {
		if o.GetKind() == "Deployment" && o.GetName() == "istiod" {
			d = o.DeepCopy()
		}
	}
	if d == nil {
		b.Fatal("no istiod Deployment in the default profile")
	}
	d.SetGeneration(1)
	_ = unstructured.SetNestedField(d.Object, map[string]any{
		"observedGeneration": int64(1), "replicas": int64(1), "updatedReplicas": int64(1),
		"readyReplicas": int64(1), "availableReplicas": int64(1),
		"conditions": []any{map[string]any{"type": "Available", "status": "True", "lastTransitionTime": "2026-11-29T00:00:00Z"}},
	}, "status")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v := readiness.Check(d); v.Status != readiness.Ready {
			b.Fatal(v)
		}
	}
}
