// Package operator_test holds the imports test of the whole tree: every package of this
// module may import only what the architecture's diagram lets it (one direction of flow,
// one package per concern, nothing imports upward).
package operator_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// module is this module's import path.
const module = "github.com/istioctl-installer/istioctl/"

// allowed is, for every package of the tree (by its path in the module), the packages of
// this module its non-test files may import: the diagram as data. A package missing here
// fails the test: a new package gets its row, as it gets its row in the architecture table.
// Where a row grants more than the picture shows, the comment says why.
var allowed = map[string][]string{
	"cmd/istioctl": {"pkg/cmd", "pkg/gcpace", "pkg/heapsample", "operator/event"},

	// The command layer turns flags into an action and hands its results to a printer.
	// operator/action/fleetrun is the fleet's action layer: its operations compose the
	// single-cluster actions (action.Precheck, action.Install), so it lives under action
	// (action cannot import it: it imports action).
	"pkg/cmd":        {"operator/action", "operator/action/fleetrun", "operator/spec", "operator/event", "operator/kubeflags", "pkg/printer", "pkg/version"},
	"pkg/printer":    {"operator/check", "operator/event", "operator/fleet", "operator/history", "operator/images", "operator/link", "operator/mirror", "operator/revision", "operator/tag", "pkg/version"},
	"pkg/version":    nil,
	"pkg/gcpace":     nil,
	"pkg/heapsample": nil,

	"operator/action": {"operator/api/v1alpha1", "operator/check", "operator/complete", "operator/component", "operator/event", "operator/external",
		"operator/helmrelease", "operator/history", "operator/images", "operator/install", "operator/kube", "operator/kubeflags", "operator/link", "operator/link/readerchart", "operator/lock",
		"operator/mirror", "operator/ownership", "operator/render", "operator/revision", "operator/schedule", "operator/spec", "operator/tag", "operator/translate",
		// upgrade --strategy revision: the hop rule refuses the move before anything is
		// written; operator/migrate moves the workloads.
		"operator/skew", "operator/migrate"},
	"operator/action/fleetrun": {"operator/action", "operator/bounded", "operator/check", "operator/component", "operator/event", "operator/fleet", "operator/kube",
		"operator/kubeflags", "operator/link", "operator/ownership", "operator/schedule", "operator/spec"},

	// The concerns.
	"operator/api/v1alpha1":             nil, // the types and their schema: no I/O, no charts
	"operator/spec":                     {"operator/api/v1alpha1", "operator/bounded", "operator/component", "profiles", "manifests"},
	"operator/component":                {"operator/api/v1alpha1"},
	"operator/render":                   {"manifests", "operator/api/v1alpha1", "operator/bounded", "operator/component", "operator/skew", "operator/spec", "operator/render/internal/fastyaml", "operator/render/internal/pathpatch"},
	"operator/render/internal/fastyaml": nil,
	// Only tests import fastyamltest.
	"operator/render/internal/fastyaml/fastyamltest": {"operator/render/internal/fastyaml"},
	"operator/render/internal/pathpatch":             {"operator/api/v1alpha1", "operator/spec"},
	"operator/install": {"operator/admission", "operator/component", "operator/event", "operator/existing", "operator/helmrelease", "operator/kube",
		"operator/objdiff", "operator/ownership", "operator/readiness", "operator/render", "operator/rollout", "operator/schedule"},
	"operator/check": {"operator/admission", "operator/api/v1alpha1", "operator/component", "operator/existing", "operator/external", "operator/kube",
		"operator/link", "operator/link/readerchart", "operator/objdiff", "operator/ownership", "operator/readiness", "operator/render", "operator/revision", "operator/skew", "operator/spec"},
	"operator/tag": {"operator/check", "operator/component", "operator/event", "operator/kube", "operator/objdiff", "operator/ownership",
		"operator/render", "operator/revision", "operator/spec"},
	"operator/complete":    {"operator/api/v1alpha1", "operator/history", "operator/kube", "operator/kubeflags", "operator/revision", "operator/spec", "operator/tag"},
	"operator/fleet":       {"operator/api/v1alpha1", "operator/bounded", "operator/link", "operator/ownership", "operator/spec"},
	"operator/link":        {"operator/kube", "operator/ownership"},
	"operator/revision":    {"operator/kube", "operator/ownership", "operator/skew"},
	"operator/migrate":     {"operator/event", "operator/history", "operator/kube", "operator/ownership", "operator/readiness", "operator/revision"},
	"operator/existing":    {"operator/helmrelease", "operator/kube", "operator/ownership", "operator/readiness", "operator/revision"},
	"operator/external":    {"operator/api/v1alpha1", "operator/component"},
	"operator/admission":   {"operator/kube", "operator/ownership", "operator/readiness"},
	"operator/history":     {"operator/bounded", "operator/kube", "operator/ownership"},
	"operator/helmrelease": {"operator/bounded", "operator/kube"},

	// The reader identity as the charts render it: apart from link, so that link and its
	// importers (fleet, the printers) do not link the charts and Helm.
	"operator/link/readerchart": {"operator/component", "operator/link", "operator/ownership", "operator/render", "operator/spec"},

	// readiness reads ownership's annotation of a DaemonSet rolled node by node.
	"operator/readiness": {"operator/kube", "operator/ownership"},
	"operator/rollout":   {"operator/event", "operator/kube", "operator/ownership", "operator/readiness"},
	"operator/translate": {"operator/component", "operator/render", "operator/spec"},
	"operator/lock":      {"operator/event"},
	"operator/skew":      {"manifests"},
	"operator/images":    {"operator/component", "operator/render", "operator/spec"},
	"operator/mirror":    nil, // registry copies: go-containerregistry only
	// ownership names who istioctl applies as; it hands that to kube as options.
	"operator/ownership": {"operator/api/v1alpha1", "operator/component", "operator/kube"},
	"operator/objdiff":   nil,
	"operator/schedule":  nil,
	"operator/event":     nil,

	// The bottom: kube is the only way to a cluster and is told, not knowing, who it
	// applies as; kubeflags are the connection flags.
	"operator/kube":      {"operator/kubeflags"},
	"operator/kubeflags": nil,
	"operator/kube/ref":  nil,
	// bounded is how much of one input is read (files, standard input, payloads unzipped
	// from the cluster): every reader of such input, wherever it sits, reads through it.
	"operator/bounded": nil,

	"manifests": nil,
	"profiles":  nil,
}

// vocabulary are the leaves any package may import: names of things, no behaviour. The
// object reference names what kube reads and writes without its client, so history,
// translate, the checks and the printer name objects in one form.
var vocabulary = []string{"operator/kube/ref"}

// roots are the trees the test walks; pkg/testing (e2e helpers), hack and tools are not
// product code.
var roots = []string{"cmd", "pkg", "operator", "manifests", "profiles"}

func skipped(dir string) bool {
	return dir == "pkg/testing" || strings.HasPrefix(dir, "pkg/testing/") || strings.Contains(dir, "/testdata")
}

// edges reads the module's imports of every non-test file under the roots (dir relative
// to the module's root): package -> imported packages of this module.
func edges(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, r := range roots {
		err := filepath.WalkDir(filepath.Join(root, r), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if skipped(rel) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			pkg := filepath.ToSlash(filepath.Dir(rel))
			if _, ok := out[pkg]; !ok {
				out[pkg] = nil
			}
			for _, imp := range parsed.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if strings.HasPrefix(p, module) {
					out[pkg] = append(out[pkg], strings.TrimPrefix(p, module))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// violations are the edges the table does not allow, and the packages it has no row for.
func violations(edges, allowed map[string][]string) []string {
	var out []string
	for pkg, imports := range edges {
		ok, known := allowed[pkg]
		if !known {
			out = append(out, pkg+": no row in the imports table (give it one, and its row in the architecture table)")
			continue
		}
		for _, imp := range imports {
			if !contains(ok, imp) && !contains(vocabulary, imp) {
				out = append(out, pkg+" imports "+imp+": the diagram does not allow it")
			}
		}
	}
	sort.Strings(out)
	return dedupe(out)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func dedupe(xs []string) []string {
	var out []string
	for i, x := range xs {
		if i == 0 || xs[i-1] != x {
			out = append(out, x)
		}
	}
	return out
}

// TestImportsFollowTheDiagram holds every package of the tree to its row.
func TestImportsFollowTheDiagram(t *testing.T) {
	got := edges(t, "..")
	if len(got) < 30 {
		t.Fatalf("read only %d packages: is the test running in operator/?", len(got))
	}
	for _, v := range violations(got, allowed) {
		t.Error(v)
	}
	for pkg := range allowed {
		if _, ok := got[pkg]; !ok {
			t.Errorf("%s has a row but no package: remove the row", pkg)
		}
	}
}

// TestImportsCheckerCatches: the checker reports an import a row forbids (the engine
// importing the printers, kube importing a concern, the charts read by the API types) and
// a package without a row, and nothing else.
func TestImportsCheckerCatches(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edges map[string][]string
		want  []string
	}{
		{"allowed", map[string][]string{"operator/kube": {"operator/kubeflags"}}, nil},
		{"kube imports a concern", map[string][]string{"operator/kube": {"operator/kubeflags", "operator/ownership"}},
			[]string{"operator/kube imports operator/ownership: the diagram does not allow it"}},
		{"the engine imports a printer", map[string][]string{"operator/install": {"pkg/printer"}},
			[]string{"operator/install imports pkg/printer: the diagram does not allow it"}},
		{"the API types read the charts", map[string][]string{"operator/api/v1alpha1": {"manifests"}},
			[]string{"operator/api/v1alpha1 imports manifests: the diagram does not allow it"}},
		{"a command reaches past action", map[string][]string{"pkg/cmd": {"operator/install"}},
			[]string{"pkg/cmd imports operator/install: the diagram does not allow it"}},
		{"a package without a row", map[string][]string{"operator/newthing": nil},
			[]string{"operator/newthing: no row in the imports table (give it one, and its row in the architecture table)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := violations(tc.edges, allowed)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("violations %q, want %q", got, tc.want)
			}
		})
	}
}
