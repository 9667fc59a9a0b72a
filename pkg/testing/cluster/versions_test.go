package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/modfile"
)

// sharedVersionExceptions are the modules both go.mod files need at different versions, and why.
var sharedVersionExceptions = map[string]string{
	// Our release version is istio.io/api's; pilot-discovery keeps the one its pin asks for.
	"istio.io/api": "the product's version is the API's release; the bed's istiod keeps its pin's",
}

// TestSharedModuleVersions keeps the main module and the bed's build module (hack/kube/bedbuild) at
// one version of every module they both require: hack/test.sh compiles the test binaries after the
// bed's binaries so that, on a cold machine, client-go, helm, gRPC and the rest compile once.
// One version apart (golang.org/x/sys, say) and every package above it compiles twice.
func TestSharedModuleVersions(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	ours := requires(t, filepath.Join(root, "go.mod"))
	bed := requires(t, filepath.Join(root, "hack", "kube", "bedbuild", "go.mod"))
	for path, v := range ours {
		bv, ok := bed[path]
		if !ok || bv == v {
			continue
		}
		if why, ok := sharedVersionExceptions[path]; ok {
			t.Logf("%s: %s here, %s in the bed (%s)", path, v, bv, why)
			continue
		}
		t.Errorf("%s is %s in go.mod and %s in hack/kube/bedbuild/go.mod: require the higher in both (go get %s@<version>, then go mod tidy in each)", path, v, bv, path)
	}
}

// requires reads a go.mod's required versions, replacements applied.
func requires(t *testing.T, file string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(file, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range f.Require {
		out[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range f.Replace {
		if _, ok := out[r.Old.Path]; ok && r.New.Version != "" {
			out[r.Old.Path] = r.New.Version
		}
	}
	return out
}
