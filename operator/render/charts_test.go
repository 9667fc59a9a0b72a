package render

import (
	"bytes"
	"io/fs"
	"testing"
	"unsafe"

	"github.com/istioctl-installer/istioctl/manifests"
)

// TestChartsReadCRDsInPlace: the embedded base chart's CRD file reaches the loader as the
// binary's own bytes (not a heap copy), and they are the file's bytes.
func TestChartsReadCRDsInPlace(t *testing.T) {
	c, err := NewCharts("")
	if err != nil {
		t.Fatal(err)
	}
	files, err := c.Files("base")
	if err != nil {
		t.Fatal(err)
	}
	want, err := fs.ReadFile(manifests.Charts, "charts/base/crds/crd-all.gen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range files {
		if f.Name != "crds/crd-all.gen.yaml" {
			continue
		}
		found = true
		if !bytes.Equal(f.Data, want) {
			t.Errorf("crds/crd-all.gen.yaml: %d bytes, not the embedded file's %d", len(f.Data), len(want))
		}
		if unsafe.SliceData(f.Data) != unsafe.StringData(manifests.BaseCRDs) {
			t.Errorf("crds/crd-all.gen.yaml was copied, not read in place")
		}
	}
	if !found {
		t.Fatalf("base chart has no crds/crd-all.gen.yaml among %d files", len(files))
	}
}
