package spec_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
)

// specCase is one input: -f files (name -> content, given in name order) and --set flags.
type specCase struct {
	name  string
	files map[string]string
	sets  []string
}

const header = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\n"

// resolveCases resolves each case in a directory of its own (so messages name the files
// as written) and describes the outcome: the error, or the enabled component instances
// and the warnings, plus what more describe says. It checks the text against the golden
// file testdata/spec/classes/<golden>.
func resolveCases(t *testing.T, goldenName string, cases []specCase, describe func(specCase, *spec.Resolved) string) {
	t.Helper()
	goldenPath, err := filepath.Abs(filepath.Join("../../testdata/spec/classes", goldenName))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, tc := range cases {
		dir := t.TempDir()
		var files []string
		for name, body := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, name)
		}
		sort.Strings(files)
		fmt.Fprintf(&out, "== %s\n", tc.name)
		for _, f := range files {
			fmt.Fprintf(&out, "   -f %s\n", f)
		}
		for _, s := range tc.sets {
			fmt.Fprintf(&out, "   --set %s\n", s)
		}
		res, err := inDir(t, dir, spec.Options{Files: files, Sets: tc.sets})
		if err != nil {
			fmt.Fprintf(&out, "error: %s\n", strings.ReplaceAll(err.Error(), "\n", "\n  "))
			continue
		}
		var insts []string
		for _, i := range component.Instances(res.IOP) {
			insts = append(insts, i.Key()+"@"+i.Namespace)
		}
		fmt.Fprintf(&out, "installs: %s\n", strings.Join(insts, " "))
		for _, w := range res.Warnings {
			fmt.Fprintf(&out, "warning: %s\n", w.Error())
		}
		if describe != nil {
			out.WriteString(describe(tc, res))
		}
	}
	golden.Check(t, goldenPath, []byte(out.String()))
}

// inDir resolves with dir as the working directory.
func inDir(t *testing.T, dir string, opts spec.Options) (*spec.Resolved, error) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := os.Chdir(wd); err != nil {
			t.Fatal(err)
		}
	}()
	return spec.Resolve(opts)
}

// one is a case with a single -f file.
func one(name, body string, sets ...string) specCase {
	return specCase{name: name, files: map[string]string{"spec.yaml": body}, sets: sets}
}
