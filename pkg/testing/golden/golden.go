// Package golden compares test output with files under testdata/; `go test -update`
// rewrites them.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/pmezard/go-difflib/difflib"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// Check compares got with the file at path, or writes it with -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if string(want) == string(got) {
		return
	}
	diff, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(want)), B: difflib.SplitLines(string(got)),
		FromFile: path, ToFile: "got", Context: 2,
	})
	t.Errorf("output differs from %s (go test -update rewrites it):\n%s", path, diff)
}

// Updating reports whether this run rewrites golden files (-update), for tests whose
// recordings are compared in a form of their own rather than byte for byte.
func Updating() bool { return *update }
