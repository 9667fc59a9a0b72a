// Package sizecheck holds the size rule of the house, as a test: no non-test Go file under
// operator/ or pkg/ over 800 lines, no function over 100. Past that, a file or function has
// stopped having one job; cut it.
package sizecheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

const (
	maxFileLines = 800
	maxFuncLines = 100
)

func TestSizes(t *testing.T) {
	files := 0
	for _, root := range []string{"../../operator", "../../pkg"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			files++
			name := strings.TrimPrefix(path, "../../")
			if n := fset.Position(f.End()).Line; n > maxFileLines {
				t.Errorf("%s: %d lines (at most %d): split it by concern", name, n, maxFileLines)
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok {
					continue
				}
				if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
					t.Errorf("%s: func %s is %d lines (at most %d): cut it into its steps", name, fn.Name.Name, n, maxFuncLines)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 100 {
		t.Fatalf("checked only %d files: is the test running from tools/sizecheck?", files)
	}
}
