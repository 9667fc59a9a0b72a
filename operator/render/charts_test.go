package render

import (
	"bytes"
	"io/fs"
	"testing"
	"unsafe"

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
