package render

import (
	"bytes"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/manifests"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// The CRD text is printed as it is in the file: it must be exactly what printing the
// parsed CRD would give.
func TestPristineCRDTextIsCanonical(t *testing.T) {
	data, err := manifests.Charts.ReadFile("charts/base/crds/crd-all.gen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := crdObjects(data, chartLabels("base", version.Version, version.Version), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 15 {
		t.Fatalf("%d CRDs", len(objs))
	}
	for _, o := range objs {
		raw, ok := pristine.Load(o)
		if !ok {
			t.Fatalf("%s: not kept as text", o.GetName())
		}
		printed, err := sigsyaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(printed, raw.([]byte)) {
			t.Errorf("%s: the file's text differs from the printed object", o.GetName())
		}
	}
}

// A lazy render prints the same bytes as a full one, and Materialize restores whole CRDs.
func TestLazyCRDs(t *testing.T) {
	res, err := spec.Resolve(spec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	full, _ := NewRenderer("")
	lazy, _ := NewRenderer("")
	lazy.LazyCRDs = true
	a, _, err := full.Render(res)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := lazy.Render(res)
	if err != nil {
		t.Fatal(err)
	}
	ya, _ := YAML(All(a))
	yb, _ := YAML(All(b))
	if !bytes.Equal(ya, yb) {
		t.Fatal("lazy and full renders print differently")
	}
	objs := All(b)
	if _, ok := objs[0].Object["spec"]; ok {
		t.Fatal("a lazy CRD has its body parsed")
	}
	if err := Materialize(objs); err != nil {
		t.Fatal(err)
	}
	if _, ok := objs[0].Object["spec"]; !ok || objs[0].GetKind() != "CustomResourceDefinition" {
		t.Fatal("Materialize did not parse the CRD body")
	}
}
