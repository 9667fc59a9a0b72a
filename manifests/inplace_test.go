package manifests_test

import (
	"io/fs"
	"testing"

	"github.com/istioctl-installer/istioctl/manifests"
)

// InPlace reads embed.FS's layout: every chart file must read as fs.ReadFile reads it.
func TestInPlace(t *testing.T) {
	n := 0
	err := fs.WalkDir(manifests.Charts, "charts", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		want, err := fs.ReadFile(manifests.Charts, p)
		if err != nil {
			return err
		}
		got, ok := manifests.InPlace(p)
		if !ok || got != string(want) {
			t.Errorf("InPlace(%q): %d bytes, %v; fs.ReadFile: %d bytes", p, len(got), ok, len(want))
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Errorf("walked %d chart files, want the whole chart set", n)
	}
	for _, p := range []string{"charts", "charts/base", "charts/none.yaml"} {
		if _, ok := manifests.InPlace(p); ok {
			t.Errorf("InPlace(%q) = true for a directory or a missing file", p)
		}
	}
}
