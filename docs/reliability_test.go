package docs_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/pkg/cmd"
)

// repoRoot is the repository, from this directory (where go test runs).
const repoRoot = ".."

// The phase table's columns: the command, its phase, then one per fault.
var phaseTableHeader = []string{"command", "phase", "Ctrl-C", "apiserver loss", "lock loss", "watch stall"}

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	// A cited test: `TestName` or `TestName/sub_test`, then its file in parentheses.
	citedTest = regexp.MustCompile("`(Test[A-Za-z0-9_]+)(/[^`]*)?` \\(`([^`]+_test\\.go)`\\)")
	anyTest   = regexp.MustCompile("`Test[A-Za-z0-9_]*[^`]*`")
	rerun     = regexp.MustCompile(`re-run: (yes|no|n\.a\.)`)
)

// TestPhaseFaultTable: docs/reliability.md's "Phases and faults" table names only phases
// that are event types (operator/event's Type constants, read from its source), only tests
// that exist in the files it names, has a test in every row and every cell that claims
// one, lists each cell without a test under "Not covered", and has a row for every command
// that takes the cluster lock (its --lock-timeout flag), or names it there among the
// writers with no fault test.
func TestPhaseFaultTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "reliability.md"))
	if err != nil {
		t.Fatal(err)
	}
	writers := lockingCommands()
	if len(writers) < 8 {
		t.Fatalf("only %d commands take the cluster lock: %v", len(writers), writers)
	}
	for _, p := range phaseTableProblems(string(doc), eventTypes(t), writers) {
		t.Error(p)
	}
}

// TestPhaseFaultTableCatches: each way the table can go wrong is found.
func TestPhaseFaultTableCatches(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "docs", "reliability.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc, types, writers := string(raw), eventTypes(t), lockingCommands()
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"a phase that is no event type", "| `install`, `upgrade` | `plan` |", "| `install`, `upgrade` | `planning` |", "`planning` is not an event type"},
		{"a test that does not exist", "`TestInterruptPruneE2E` (`pkg/cmd/interrupt_prune_e2e_test.go`) |", "`TestInterruptPrunedE2E` (`pkg/cmd/interrupt_prune_e2e_test.go`) |", "TestInterruptPrunedE2E is not in pkg/cmd/interrupt_prune_e2e_test.go"},
		{"a test in another file", "`TestInterruptRemoteSecretE2E` (`pkg/cmd/interrupt_remotesecret_e2e_test.go`)", "`TestInterruptRemoteSecretE2E` (`pkg/cmd/interrupt_e2e_test.go`)", "TestInterruptRemoteSecretE2E is not in pkg/cmd/interrupt_e2e_test.go"},
		{"a subtest that does not exist", "`TestWriteLockE2E/interrupted_holder`", "`TestWriteLockE2E/frozen_holder`", `no subtest "frozen holder"`},
		{"a test without its file", "`TestInterruptRemoteSecretE2E` (`pkg/cmd/interrupt_remotesecret_e2e_test.go`)", "`TestInterruptRemoteSecretE2E`", "names a test without its file"},
		{"a tested cell that does not say whether a re-run converges", "exit 130; re-run: yes, one token.", "exit 130.", "does not say whether a re-run converges"},
		{"a row without a test", "the minted token deleted, the link as it was; exit 130; re-run: yes, one token. `TestInterruptRemoteSecretE2E` (`pkg/cmd/interrupt_remotesecret_e2e_test.go`)", "not tested", "has no test"},
		{"an untested cell not listed", "  - `install`, `upgrade` `plan`: lock loss", "  - `install`, `upgrade` `plan`: nothing", "`install`, `upgrade` `plan`: lock loss is not tested and not listed"},
		{"a writer with no row", "`tag set`, `tag remove`: every phase", "`tag remove`: every phase", "tag set takes the cluster lock but has no row"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// From the table on: the faults table above cites some of the same tests.
			at := strings.Index(doc, "\n## Phases and faults\n")
			if at < 0 || !strings.Contains(doc[at:], tc.old) {
				t.Fatalf("the document no longer holds %q after the phase table's heading: update the case", tc.old)
			}
			broken := doc[:at] + strings.Replace(doc[at:], tc.old, tc.new, 1)
			problems := phaseTableProblems(broken, types, writers)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("want a problem saying %q, got:\n%s", tc.want, strings.Join(problems, "\n"))
			}
		})
	}
}

// phaseTableProblems is what is wrong with doc's phase table, one line each.
func phaseTableProblems(doc string, types map[string]bool, writers []writer) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	rows := tableRows(docSection(doc, "## Phases and faults"))
	if len(rows) < 2 || !slices.Equal(rows[0], phaseTableHeader) {
		return []string{fmt.Sprintf("the phase table's header is not %q", phaseTableHeader)}
	}
	notCovered := docSection(doc, "## Not covered")
	untested := listItems(notCovered, "- **Untested cells of the phase table**")
	noTest := listItems(notCovered, "- **Writers and phases with no fault test**")
	covered := map[string]bool{}
	tests := &testFiles{parsed: map[string]*testFile{}}
	for _, row := range rows[2:] {
		if len(row) != len(phaseTableHeader) {
			bad("row %q: %d cells, want %d", row, len(row), len(phaseTableHeader))
			continue
		}
		for _, c := range commandsOf(row[0]) {
			covered[c] = true
		}
		phase := ""
		if m := backticked.FindStringSubmatch(row[1]); m != nil {
			phase = m[1]
		}
		if !types[phase] {
			bad("row %s %s: `%s` is not an event type (operator/event's Type constants)", row[0], row[1], phase)
		}
		name := row[0] + " `" + phase + "`"
		tested := 0
		for i, cell := range row[2:] {
			fault := phaseTableHeader[2+i]
			cites := citedTest.FindAllStringSubmatch(cell, -1)
			if n := len(anyTest.FindAllString(cell, -1)); n != len(cites) {
				bad("%s, %s: names a test without its file (`TestName` (`path_test.go`))", name, fault)
			}
			switch {
			case strings.HasPrefix(cell, "n.a."):
				continue
			case strings.HasPrefix(cell, "not tested"):
				if !slices.ContainsFunc(untested, func(item string) bool {
					return strings.HasPrefix(item, name+":") && strings.Contains(item, fault)
				}) {
					bad("%s: %s is not tested and not listed under Not covered's untested cells", name, fault)
				}
				continue
			case len(cites) == 0:
				bad("%s, %s: neither a test nor `not tested` nor `n.a.`", name, fault)
				continue
			}
			tested++
			if !rerun.MatchString(cell) {
				bad("%s, %s: does not say whether a re-run converges (re-run: yes, no or n.a.)", name, fault)
			}
			for _, c := range cites {
				if err := tests.has(c[3], c[1], strings.TrimPrefix(c[2], "/")); err != nil {
					bad("%s, %s: %v", name, fault, err)
				}
			}
		}
		if tested == 0 {
			bad("%s has no test: drop the row and list it under Not covered", name)
		}
	}
	for _, item := range noTest {
		for _, c := range commandsOf(item) {
			covered[c] = true
		}
	}
	for _, w := range writers {
		if !slices.ContainsFunc(w.names, func(n string) bool { return covered[n] }) {
			bad("%s takes the cluster lock but has no row in the phase table, nor a place among the writers with no fault test", w.path)
		}
	}
	return out
}

// docSection is doc from the heading line to the next heading of its level.
func docSection(doc, heading string) string {
	_, rest, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		return ""
	}
	end, _, _ := strings.Cut(rest, "\n## ")
	return end
}

// tableRows is the first table of section, each row's cells trimmed.
func tableRows(section string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	return rows
}

// listItems is the nested items of the list item that starts with head, each with its
// continuation lines joined, without its "  - ".
func listItems(section, head string) []string {
	var items []string
	in := false
	for _, line := range strings.Split(section, "\n") {
		switch {
		case strings.HasPrefix(line, head):
			in = true
		case !in:
		case strings.HasPrefix(line, "  - "):
			items = append(items, strings.TrimPrefix(line, "  - "))
		case strings.HasPrefix(line, "    ") && len(items) > 0:
			items[len(items)-1] += " " + strings.TrimSpace(line)
		default:
			return items
		}
	}
	return items
}

// commandsOf is the commands a cell names in backticks, without their flags:
// "`upgrade --strategy revision`" is upgrade.
func commandsOf(cell string) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
		var words []string
		for _, w := range strings.Fields(m[1]) {
			if strings.HasPrefix(w, "-") {
				break
			}
			words = append(words, w)
		}
		out = append(out, strings.Join(words, " "))
	}
	return out
}

// writer is a command that takes the cluster lock: its path ("experimental fleet install")
// and every way to name it (aliases: "x fleet install").
type writer struct {
	path  string
	names []string
}

// lockingCommands is every command that takes the cluster lock: the ones with the lock's
// --lock-timeout flag.
func lockingCommands() []writer {
	var out []writer
	var walk func(c *cobra.Command, names []string)
	walk = func(c *cobra.Command, names []string) {
		if c.HasParent() {
			var longer []string
			for _, n := range names {
				for _, name := range append([]string{c.Name()}, c.Aliases...) {
					longer = append(longer, strings.TrimSpace(n+" "+name))
				}
			}
			names = longer
		}
		for _, sub := range c.Commands() {
			walk(sub, names)
		}
		if c.Runnable() && c.Flags().Lookup("lock-timeout") != nil {
			out = append(out, writer{path: strings.TrimPrefix(c.CommandPath(), "istioctl "), names: names})
		}
	}
	walk(cmd.NewRootCommand(cmd.Streams{}), []string{""})
	return out
}

// eventTypes is the values of operator/event's Type constants, read from its source.
func eventTypes(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "operator", "event", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				v := s.(*ast.ValueSpec)
				if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Type" || len(v.Values) != 1 {
					continue
				}
				if lit, ok := v.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					types[s] = true
				}
			}
		}
	}
	if len(types) < 20 || !types["done"] {
		t.Fatalf("read only %d event types from operator/event: %v", len(types), types)
	}
	return types
}

// testFiles reads each cited test file once.
type testFiles struct{ parsed map[string]*testFile }

type testFile struct {
	src   string
	funcs map[string]bool
	err   error
}

// has says whether file (from the repository's root) declares test, and, when sub is given,
// holds the subtest's name as a literal ("stopped_holder": "stopped holder").
func (fs *testFiles) has(file, test, sub string) error {
	f, ok := fs.parsed[file]
	if !ok {
		f = &testFile{funcs: map[string]bool{}}
		fs.parsed[file] = f
		src, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err == nil {
			var parsed *ast.File
			parsed, err = parser.ParseFile(token.NewFileSet(), file, src, parser.SkipObjectResolution)
			if err == nil {
				f.src = string(src)
				for _, d := range parsed.Decls {
					if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
						f.funcs[fn.Name.Name] = true
					}
				}
			}
		}
		f.err = err
	}
	switch {
	case f.err != nil:
		return f.err
	case !f.funcs[test]:
		return fmt.Errorf("%s is not in %s", test, file)
	case sub != "" && !strings.Contains(f.src, strconv.Quote(strings.ReplaceAll(sub, "_", " "))):
		return fmt.Errorf("%s (%s) has no subtest %q", test, file, strings.ReplaceAll(sub, "_", " "))
	}
	return nil
}
