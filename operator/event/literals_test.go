package event_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const eventPkg = "github.com/istioctl-installer/istioctl/operator/event"

// TestNoLiteralComparisons: no printer or engine file compares a field of an event (of any
// type of this package: Event, FleetCluster, FleetLink, ...) with a string literal; they
// branch on the typed fields (Type, Action, Operation, the outcomes, Lock, DryRun). Asking
// whether a field is set (!= "") is no branching on text, and is allowed.
func TestNoLiteralComparisons(t *testing.T) {
	exports, packages := listPackages(t, "./operator/...", "./pkg/printer")
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		if f := exports[path]; f != "" {
			return os.Open(f)
		}
		return nil, fmt.Errorf("no export data for %s", path)
	})
	checked := 0
	for _, p := range packages {
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range p.files {
			f, err := parser.ParseFile(fset, filepath.Join(p.dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		for _, c := range literalComparisons(t, fset, p.path, files, imp) {
			t.Errorf("%s: compares an event field with a string literal; switch on its typed field instead", c)
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("checked only %d packages", checked)
	}
}

// TestLiteralComparisonsFound: the check finds each way of comparing a field with text.
func TestLiteralComparisonsFound(t *testing.T) {
	exports, _ := listPackages(t, "./operator/event")
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })
	src := `package p
import "` + eventPkg + `"
func f(e event.Event, c event.FleetCluster) bool {
	switch e.Status {
	case "dry-run":
	}
	if e.Error != "" { // set or not: allowed
	}
	switch {
	case c.Outcome == "failed":
	}
	return "interrupted" == string(e.Result) || e.Lock != "lost" || e.Type == event.Done
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := literalComparisons(t, fset, "p", []*ast.File{f}, imp)
	if len(got) != 4 {
		t.Errorf("found %d comparisons, want 4 (the switch case, c.Outcome, the conversion, e.Lock): %v", len(got), got)
	}
}

type listed struct {
	path, dir string
	files     []string
}

// listPackages lists the packages of patterns (their non-test files) and the export data
// of them and of everything they import, from the module's root.
func listPackages(t *testing.T, patterns ...string) (map[string]string, []listed) {
	t.Helper()
	goList := func(args ...string) []string {
		cmd := exec.Command("go", append([]string{"list"}, args...)...)
		cmd.Dir = "../.."
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		var lines []string
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		return lines
	}
	exports := map[string]string{}
	for _, l := range goList(append([]string{"-deps", "-export", "-f", "{{.ImportPath}}\t{{.Export}}"}, patterns...)...) {
		path, file, _ := strings.Cut(l, "\t")
		exports[path] = file
	}
	var out []listed
	for _, l := range goList(append([]string{"-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}"}, patterns...)...) {
		parts := strings.SplitN(l, "\t", 3)
		if len(parts) == 3 && parts[2] != "" {
			out = append(out, listed{path: parts[0], dir: parts[1], files: strings.Fields(parts[2])})
		}
	}
	return exports, out
}

// literalComparisons type-checks a package's files and returns where a field of a type of
// the event package is compared with a non-empty string literal: ==, != or a switch case.
func literalComparisons(t *testing.T, fset *token.FileSet, path string, files []*ast.File, imp types.Importer) []string {
	t.Helper()
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{}}
	if _, err := (&types.Config{Importer: imp}).Check(path, fset, files, info); err != nil {
		t.Fatalf("type-checking %s: %v", path, err)
	}
	eventField := func(x ast.Expr) bool {
		for {
			switch v := x.(type) {
			case *ast.ParenExpr:
				x = v.X
				continue
			case *ast.CallExpr: // a conversion: string(e.Result)
				if tv, ok := info.Types[v.Fun]; ok && tv.IsType() && len(v.Args) == 1 {
					x = v.Args[0]
					continue
				}
			case *ast.SelectorExpr:
				sel, ok := info.Selections[v]
				if !ok || sel.Kind() != types.FieldVal {
					return false
				}
				recv := sel.Recv()
				if p, ok := recv.(*types.Pointer); ok {
					recv = p.Elem()
				}
				named, ok := recv.(*types.Named)
				return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == eventPkg
			}
			return false
		}
	}
	literal := func(x ast.Expr) bool {
		lit, ok := x.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return false
		}
		s, err := strconv.Unquote(lit.Value)
		return err == nil && s != ""
	}
	var out []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch v := n.(type) {
			case *ast.BinaryExpr:
				if (v.Op == token.EQL || v.Op == token.NEQ) &&
					((eventField(v.X) && literal(v.Y)) || (eventField(v.Y) && literal(v.X))) {
					out = append(out, fset.Position(v.Pos()).String())
				}
			case *ast.SwitchStmt:
				if v.Tag == nil || !eventField(v.Tag) {
					return true
				}
				for _, c := range v.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						if literal(e) {
							out = append(out, fset.Position(e.Pos()).String())
						}
					}
				}
			}
			return true
		})
	}
	return out
}
