package operator_test

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// layoutHeader is the header of docs/development.md's package table: the first table under
// "## Layout".
const layoutHeader = "| path | what it owns | what it must not do |"

// layoutPath is a row's first cell: one package, by its path in the module.
var layoutPath = regexp.MustCompile("^`([a-z0-9_./-]+)`$")

// layoutRows reads the package table of the development guide: the package each row names,
// and what is wrong with the table's shape (a row without three cells, a first cell that is
// not one path, a package named twice).
func layoutRows(doc string) (pkgs, problems []string) {
	_, after, ok := strings.Cut("\n"+doc, "\n## Layout\n")
	if !ok {
		return nil, []string{`no "## Layout" section`}
	}
	lines := strings.Split(after, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "## ") {
			break
		}
		if strings.HasPrefix(l, "|") {
			start = i
			break
		}
	}
	if start < 0 || strings.TrimSpace(lines[start]) != layoutHeader {
		return nil, []string{"the Layout section's first table does not start with " + layoutHeader}
	}
	seen := map[string]bool{}
	// start+1 is the delimiter row.
	for _, l := range lines[start+2:] {
		if !strings.HasPrefix(l, "|") {
			break
		}
		cells := cells(l)
		if len(cells) != 3 || cells[1] == "" || cells[2] == "" {
			problems = append(problems, "row without three filled cells: "+l)
			continue
		}
		m := layoutPath.FindStringSubmatch(cells[0])
		if m == nil {
			problems = append(problems, "row whose path is not one `package`: "+cells[0])
			continue
		}
		if seen[m[1]] {
			problems = append(problems, m[1]+": two rows")
		}
		seen[m[1]] = true
		pkgs = append(pkgs, m[1])
	}
	return pkgs, problems
}

// cells splits a table row on the bars outside code spans.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	var out []string
	var cell strings.Builder
	code := false
	for _, r := range row {
		switch {
		case r == '`':
			code = !code
		case r == '|' && !code:
			out = append(out, strings.TrimSpace(cell.String()))
			cell.Reset()
			continue
		}
		cell.WriteRune(r)
	}
	return append(out, strings.TrimSpace(cell.String()))
}

// layoutGaps compares the table's packages with the module's: a package without a row, a
// row without a package.
func layoutGaps(rows, pkgs []string) []string {
	var out []string
	inRows, inModule := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		inRows[r] = true
	}
	for _, p := range pkgs {
		inModule[p] = true
		if !inRows[p] {
			out = append(out, p+": no row in docs/development.md's Layout table (say what it owns and must not do)")
		}
	}
	for _, r := range rows {
		if !inModule[r] {
			out = append(out, r+": a row in docs/development.md's Layout table, but no package of the module: remove the row")
		}
	}
	sort.Strings(out)
	return out
}

// modulePackages are the packages go list finds in the main module, by their path in it.
func modulePackages(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}", "./...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v\n%s", err, stderr.String())
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		pkgs = append(pkgs, strings.TrimPrefix(p, module))
	}
	return pkgs
}

// TestLayoutNamesEveryPackage holds docs/development.md's Layout table to the module: one
// row for every package go list finds, none for a package that is gone.
func TestLayoutNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("../docs/development.md")
	if err != nil {
		t.Fatal(err)
	}
	rows, problems := layoutRows(string(doc))
	for _, p := range problems {
		t.Error(p)
	}
	pkgs := modulePackages(t)
	if len(pkgs) < 30 {
		t.Fatalf("go list found only %d packages: is the test running in operator/?", len(pkgs))
	}
	for _, g := range layoutGaps(rows, pkgs) {
		t.Error(g)
	}
}

// TestLayoutCheckerCatches: the table's reader and the comparison report a missing row, a
// stale row, a row named twice or without its cells, and nothing for a table that fits.
func TestLayoutCheckerCatches(t *testing.T) {
	const head = "# Guide\n\n## Layout\n\nSome words.\n\n" + layoutHeader + "\n|---|---|---|\n"
	for _, tc := range []struct {
		name, doc string
		pkgs      []string
		want      []string
	}{
		{"fits", head + "| `pkg/a` | a's job | b's job |\n| `pkg/b` | `x|y` flags | more |\n\n| path | holds |\n|---|---|\n| `hack/kube` | scripts |\n",
			[]string{"pkg/a", "pkg/b"}, nil},
		{"a package without a row", head + "| `pkg/a` | a's job | b's job |\n",
			[]string{"pkg/a", "pkg/new"}, []string{"pkg/new: no row in docs/development.md's Layout table (say what it owns and must not do)"}},
		{"a row without a package", head + "| `pkg/a` | a's job | b's job |\n| `pkg/gone` | was | is not |\n",
			[]string{"pkg/a"}, []string{"pkg/gone: a row in docs/development.md's Layout table, but no package of the module: remove the row"}},
		{"a row named twice", head + "| `pkg/a` | a's job | b's job |\n| `pkg/a` | again | again |\n",
			[]string{"pkg/a"}, []string{"pkg/a: two rows"}},
		{"a row without its must-not", head + "| `pkg/a` | a's job |\n",
			[]string{"pkg/a"}, []string{"row without three filled cells: | `pkg/a` | a's job |", "pkg/a: no row in docs/development.md's Layout table (say what it owns and must not do)"}},
		{"two packages in a row", head + "| `pkg/a`, `pkg/b` | jobs | not |\n",
			nil, []string{"row whose path is not one `package`: `pkg/a`, `pkg/b`"}},
		{"the old header", "## Layout\n\n| path | holds |\n|---|---|\n| `pkg/a` | a |\n",
			[]string{"pkg/a"}, []string{"the Layout section's first table does not start with " + layoutHeader, "pkg/a: no row in docs/development.md's Layout table (say what it owns and must not do)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, got := layoutRows(tc.doc)
			got = append(got, layoutGaps(rows, tc.pkgs)...)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems %q, want %q", got, tc.want)
			}
		})
	}
}
