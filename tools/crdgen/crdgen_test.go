package main

import (
	"os"
	"testing"
)

// TestGeneratedFileIsCurrent fails when the committed CRDs differ from what the generator
// writes now (run make generate).
func TestGeneratedFileIsCurrent(t *testing.T) {
	got, err := render(apiModuleForTest(t))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../manifests/charts/base/crds/crd-all.gen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Error("manifests/charts/base/crds/crd-all.gen.yaml is stale: run make generate")
	}
}
