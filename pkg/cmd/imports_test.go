package cmd_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// module is this module's import path.
const module = "github.com/istioctl-installer/istioctl/"

// allowedImports are the packages of this module the command layer may use: it turns flags
// into actions, asks, and hands results and events to the printers. Everything an operation
// decides lives behind operator/action.
var allowedImports = map[string]bool{
	module + "operator/action":    true,
	module + "operator/fleetrun":  true, // the fleet's operations, beside the single-cluster ones
	module + "operator/spec":      true, // the spec options and output format names
	module + "operator/event":     true, // the event types, for the sinks
	module + "operator/kubeflags": true, // the connection flags
	module + "pkg/printer":        true,
	module + "pkg/version":        true,
}

// TestCommandLayerImports fails when a non-test file of pkg/cmd imports a package of this
// module other than the allowed ones.
func TestCommandLayerImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, module) && !allowedImports[path] {
				t.Errorf("%s imports %s: the command layer reaches the engine only through operator/action (allowed: operator/action, operator/fleetrun, operator/spec, operator/event, operator/kubeflags, pkg/printer, pkg/version)", f, path)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d files: is the test running in pkg/cmd?", checked)
	}
}

// TestEngineImports fails when a non-test file of the engine (operator/...) imports a
// package of this module's pkg/: the command layer, the printers, or pkg/version (the
// version reaches the engine as a value, action.Config.Version).
func TestEngineImports(t *testing.T) {
	checked := 0
	err := filepath.WalkDir("../../operator", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range parsed.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, module+"pkg/") {
				t.Errorf("%s imports %s: the engine never imports the command layer, the printers or the build's stamp (pass the version in: action.Config.Version)", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d files: is the test running in pkg/cmd?", checked)
	}
}
