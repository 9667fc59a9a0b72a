package render

import (
	"bytes"
	"io/fs"
	"path"
	"reflect"
	"testing"
	"unsafe"

	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/istioctl-installer/istioctl/manifests"
)

// TestChartsReadInPlace: the embedded charts' files reach the loader as the binary's own
// bytes (not heap copies), and they are the files' bytes.
func TestChartsReadInPlace(t *testing.T) {
	c, err := NewCharts("")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"base", "istio-control/istio-discovery", "gateways/istio-ingress"} {
		files, err := c.Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) < 3 {
			t.Fatalf("%s: %d files", dir, len(files))
		}
		for _, f := range files {
			name := "charts/" + dir + "/" + f.Name
			want, err := fs.ReadFile(manifests.Charts, name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.Data, want) {
				t.Errorf("%s: %d bytes, not the embedded file's %d", name, len(f.Data), len(want))
			}
			if s, _ := manifests.InPlace(name); len(want) > 0 && unsafe.SliceData(f.Data) != unsafe.StringData(s) {
				t.Errorf("%s was copied, not read in place", name)
			}
		}
	}
}

// TestEmbeddedValuesAsHelm: every embedded chart's values, read by fastyaml.Parse (Charts.load),
// are what Helm's loader reads from the same values.yaml, types included (JSON's float64
// numbers), and the chart keeps the file among its raw files.
func TestEmbeddedValuesAsHelm(t *testing.T) {
	c, err := NewCharts("")
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := fs.Glob(manifests.Charts, "charts/*/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	nested, _ := fs.Glob(manifests.Charts, "charts/*/*/Chart.yaml")
	dirs = append(dirs, nested...)
	if len(dirs) < 5 {
		t.Fatalf("found %d charts", len(dirs))
	}
	for _, name := range dirs {
		dir := path.Dir(name)[len("charts/"):]
		files, err := c.Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		helm, err := loader.LoadFiles(files)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := c.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(helm.Values) == 0 {
			t.Fatalf("%s: Helm read no values", dir)
		}
		if !reflect.DeepEqual(ours.Values, helm.Values) {
			t.Errorf("%s: values differ from Helm's loader's:\nours: %#v\nhelm: %#v", dir, ours.Values, helm.Values)
		}
		raw := false
		for _, f := range ours.Raw {
			raw = raw || f.Name == "values.yaml" && len(f.Data) > 0
		}
		if !raw || len(ours.Raw) != len(helm.Raw) {
			t.Errorf("%s: raw files %d (values.yaml kept: %v), Helm's %d", dir, len(ours.Raw), raw, len(helm.Raw))
		}
	}
}

// TestEmbeddedChartsAsHelm: every embedded chart Charts.load reads is, values aside (see
// TestEmbeddedValuesAsHelm), the chart Helm's loader reads from the same files.
func TestEmbeddedChartsAsHelm(t *testing.T) {
	c, err := NewCharts("")
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := fs.Glob(manifests.Charts, "charts/*/Chart.yaml")
	nested, _ := fs.Glob(manifests.Charts, "charts/*/*/Chart.yaml")
	for _, name := range append(dirs, nested...) {
		dir := path.Dir(name)[len("charts/"):]
		files, err := c.Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		rest, _, _ := takeValues(files)
		ours, plain := loadPlain(rest)
		if !plain {
			t.Errorf("%s: not read as a plain chart", dir)
			continue
		}
		helm, err := loader.LoadFiles(rest)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ours, helm) {
			t.Errorf("%s: chart differs from Helm's loader's:\nours: %#v\nhelm: %#v", dir, ours.Metadata, helm.Metadata)
		}
	}
}

// TestLoadPlainDeclines: a chart with what only Helm's loader reads goes to it.
func TestLoadPlainDeclines(t *testing.T) {
	chartYAML := &loader.BufferedFile{Name: "Chart.yaml", Data: []byte("apiVersion: v2\nname: x\nversion: 1.0.0\n")}
	if _, ok := loadPlain([]*loader.BufferedFile{chartYAML}); !ok {
		t.Fatal("a plain chart declined")
	}
	for _, f := range []*loader.BufferedFile{
		{Name: "values.yaml"}, {Name: "Chart.lock"}, {Name: "requirements.yaml"}, {Name: "charts/sub/Chart.yaml"},
	} {
		if _, ok := loadPlain([]*loader.BufferedFile{chartYAML, f}); ok {
			t.Errorf("%s: read as plain", f.Name)
		}
	}
	// an anchor (fastyaml declines), a list where a string goes, a version Helm refuses
	for _, data := range []string{"apiVersion: v2\nname: &a x\nversion: 1.0.0\n", "apiVersion: v2\nname: x\nversion: [1]\n", "apiVersion: v2\nname: x\nversion: one\n"} {
		if _, ok := loadPlain([]*loader.BufferedFile{{Name: "Chart.yaml", Data: []byte(data)}}); ok {
			t.Errorf("%q: read as plain", data)
		}
	}
}

// TestTakeValuesDeclines: what fastyaml.Parse cannot read, or reads as something other than a
// mapping, stays with Helm's loader.
func TestTakeValuesDeclines(t *testing.T) {
	for _, data := range []string{"a: &x 1\nb: *x\n", "- 1\n- 2\n", "a: 1\n---\nb: 2\n", "a: !!str 1\n"} {
		files := []*loader.BufferedFile{{Name: "Chart.yaml"}, {Name: "values.yaml", Data: []byte(data)}}
		rest, f, v := takeValues(files)
		if f != nil || v != nil || len(rest) != 2 {
			t.Errorf("%q: taken (%v)", data, v)
		}
	}
	rest, f, v := takeValues([]*loader.BufferedFile{{Name: "values.yaml", Data: []byte("a:\n  b: 2\n  c: [x]\n")}, {Name: "Chart.yaml"}})
	if f == nil || len(rest) != 1 || rest[0].Name != "Chart.yaml" || !reflect.DeepEqual(v, map[string]any{"a": map[string]any{"b": 2.0, "c": []any{"x"}}}) {
		t.Errorf("plain values: rest %d, %#v", len(rest), v)
	}
}
