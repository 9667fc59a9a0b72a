package render

import (
	"testing"

	"github.com/istioctl-installer/istioctl/manifests"
	"github.com/istioctl-installer/istioctl/operator/spec"

	"github.com/istioctl-installer/istioctl/operator/render/internal/fastyaml/fastyamltest"
)

func TestEmitProfilesAsYAMLv2(t *testing.T) {
	crds, err := manifests.Charts.ReadFile("charts/base/crds/crd-all.gen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := ParseObjects(crds)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"default", "demo", "ambient", "remote"} {
		res, err := spec.Resolve(spec.Options{Sets: []string{"profile=" + p}})
		if err != nil {
			t.Fatalf("profile %s: %v", p, err)
		}
		r, err := NewRenderer("")
		if err != nil {
			t.Fatal(err)
		}
		ms, _, err := r.Render(res)
		if err != nil {
			t.Fatalf("profile %s: %v", p, err)
		}
		objs = append(objs, All(ms)...)
	}
	fast := 0
	for _, o := range objs {
		if fastyamltest.Emit(t, o.GetKind()+"/"+o.GetName(), o.Object) {
			fast++
		}
	}
	t.Logf("fastyaml.Emit printed %d of %d objects", fast, len(objs))
	// The fast path must carry nearly all of a render, or it saves nothing.
	if fast < len(objs)*9/10 {
		t.Errorf("fastyaml.Emit printed %d of %d objects itself, want at least 90%%", fast, len(objs))
	}
}
