package render_test

import (
	"io"
	"testing"

	"github.com/istioctl-installer/istioctl/manifests"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

func BenchmarkRenderDefault(b *testing.B) {
	for i := 0; i < b.N; i++ {
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
		if _, err := render.YAML(render.All(ms)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseCRDs(b *testing.B) {
	data, _ := manifests.Charts.ReadFile("charts/base/crds/crd-all.gen.yaml")
	for i := 0; i < b.N; i++ {
		if _, err := render.ParseObjects(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkYAMLCRDs(b *testing.B) {
	data, _ := manifests.Charts.ReadFile("charts/base/crds/crd-all.gen.yaml")
	objs, _ := render.ParseObjects(data)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := render.YAML(objs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGenerate is manifest generate's render: lazy CRDs, objects printed ahead, the
// stream written out. Its B/op is what a run maps fresh (a run collects no garbage).
func BenchmarkGenerate(b *testing.B) {
	for _, p := range []string{"default", "demo", "ambient"} {
		b.Run(p, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				res, err := spec.Resolve(spec.Options{Sets: []string{"profile=" + p}})
				if err != nil {
					b.Fatal(err)
				}
				r, _ := render.NewRenderer("")
				r.LazyCRDs, r.Printed = true, true
				ms, _, err := r.Render(res)
				if err != nil {
					b.Fatal(err)
				}
				text, err := render.Print(ms)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := text.WriteTo(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
