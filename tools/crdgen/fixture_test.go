package main

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmezard/go-difflib/difflib"
)

// apiModuleForTest is the istio.io/api module istioctl's go.mod pins. Reading go.mod ties
// the test cache to it: a different pin reruns the tests.
func apiModuleForTest(t *testing.T) apiModule {
	t.Helper()
	if _, err := os.ReadFile("../../go.mod"); err != nil {
		t.Fatal(err)
	}
	mod, err := findAPIModule("../..")
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// TestFixture: a small module whose .proto uses every marker and type rule gives the
// reviewed CRD in testdata/fixture.gen.yaml (go test -update rewrites it).
func TestFixture(t *testing.T) {
	got, err := render(apiModule{Dir: "testdata/fixture", Version: "v1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "testdata/fixture.gen.yaml", got)
}

var update = flag.Bool("update", false, "rewrite testdata/fixture.gen.yaml with the current output")

// checkGolden compares got with the file at path, or writes it with -update. (The main
// module's pkg/testing/golden does this for its tests; crdgen is a module of its own and
// does not depend on istioctl's.)
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
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

// TestGeneratorReadsOnlyProtos: the generator gives the same file from a copy of the
// module that lacks the CRDs the module publishes, so it cannot be copying them.
func TestGeneratorReadsOnlyProtos(t *testing.T) {
	mod := apiModuleForTest(t)
	want, err := render(mod)
	if err != nil {
		t.Fatal(err)
	}
	copied := t.TempDir()
	err = filepath.WalkDir(mod.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(mod.Dir, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(copied, rel), 0o755)
		}
		if filepath.ToSlash(rel) == publishedFile {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(copied, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(copied, publishedFile)); !os.IsNotExist(err) {
		t.Fatalf("the copy has %s: %v", publishedFile, err)
	}
	got, err := render(apiModule{Dir: copied, Version: mod.Version})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Error("the generator's output depends on the published CRD file")
	}
}

// A marker the generator does not know is an error naming the field, not a silent miss.
func TestUnknownMarker(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/fixture")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "example/v1alpha1/widget.proto")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), "// Its id.\n", "// Its id.\n  // +kubebuilder:validation:MaxLenght=3\n", 1))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = render(apiModule{Dir: dir, Version: "v1.2.3"})
	if err == nil || !strings.Contains(err.Error(), "example.v1alpha1.Part.id") || !strings.Contains(err.Error(), "MaxLenght") {
		t.Errorf("err = %v, want one naming example.v1alpha1.Part.id and the marker", err)
	}
}
