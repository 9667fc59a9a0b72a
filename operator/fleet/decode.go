package fleet

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/bounded"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Load reads, decodes and validates the fleet file at path ("-": from stdin, as every -f
// reads; its relative paths then start in the working directory). contexts are the
// kubeconfig's context names: every cluster's context must be one of them. The error is a
// v1alpha1.Problems naming the file and line of each problem.
func Load(path string, stdin io.Reader, contexts []string) (*Fleet, error) {
	return load(path, stdin, contexts, false)
}

// LoadOffline is Load for what touches no cluster (fleet dump): a context the kubeconfig
// lacks, or no kubeconfig at all, is a warning, so a pipeline renders a fleet where no
// credentials exist.
func LoadOffline(path string, stdin io.Reader, contexts []string) (*Fleet, error) {
	return load(path, stdin, contexts, true)
}

func load(path string, stdin io.Reader, contexts []string, offline bool) (*Fleet, error) {
	source, data, err := path, []byte(nil), error(nil)
	if path == "-" {
		source = "<stdin>"
		data, err = bounded.ReadStdin(stdin)
	} else {
		data, err = bounded.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the fleet file: %w", err)
	}
	return decode(source, filepath.Dir(path), data, contexts, offline)
}

// Decode decodes and validates a fleet file's bytes; source names it in errors and dir is
// where its relative paths start.
func Decode(source, dir string, data []byte, contexts []string) (*Fleet, error) {
	return decode(source, dir, data, contexts, false)
}

func decode(source, dir string, data []byte, contexts []string, offline bool) (*Fleet, error) {
	d := &decoder{source: source, f: &Fleet{Source: source, Dir: dir}, offline: offline, budget: v1alpha1.NewBudget(source)}
	root, ok := d.document(data)
	if !ok {
		return nil, d.problems
	}
	d.root(root)
	if len(d.problems) == 0 {
		validate(d, contexts)
	}
	sort.SliceStable(d.problems, func(i, j int) bool { return d.problems[i].Line < d.problems[j].Line })
	if err := d.problems.Err(); err != nil {
		return nil, err
	}
	d.f.lines, d.f.Warnings = d.lines, d.problems.Warnings()
	return d.f, nil
}

type decoder struct {
	source   string
	f        *Fleet
	problems v1alpha1.Problems
	// lines of the fields validate names: "spec.meshID", "clusters[1].primary", ...
	lines map[string]int
	// offline: contexts missing from the kubeconfig are warnings (LoadOffline).
	offline bool
	// budget is the file's: the fleet's own fields and every spec decoded from it spend
	// from it, so N overlays aliasing one large node cost what N copies of it would.
	budget *v1alpha1.Budget
}

// spend counts a node of the file; false once the file has expanded past its budget.
func (d *decoder) spend(n *yaml.Node, path string) bool {
	return d.budget.Spend(n, path, &d.problems)
}

func (d *decoder) add(line int, path, msg string) {
	d.problems = append(d.problems, v1alpha1.Problem{Source: d.source, Line: line, Path: path, Msg: msg})
}

func (d *decoder) line(path string) int { return d.lines[path] }

// document parses the one YAML document of the file.
func (d *decoder) document(data []byte) (*yaml.Node, bool) {
	docs, problem := v1alpha1.Documents(d.source, data)
	if problem != nil {
		d.problems = append(d.problems, *problem)
		return nil, false
	}
	switch {
	case len(docs) == 0:
		d.add(0, "", "the file is empty: a fleet file holds one "+KindName+" ("+APIVersion+")")
		return nil, false
	case len(docs) > 1:
		d.add(docs[1].Line, "", fmt.Sprintf("%d YAML documents in one file; a fleet file holds exactly one %s", len(docs), KindName))
		return nil, false
	}
	n := docs[0].Content[0]
	if n.Kind != yaml.MappingNode {
		d.add(n.Line, "", "the document is not a "+KindName+" object")
		return nil, false
	}
	return n, true
}

// fields are the handlers of an object's known keys.
type fields map[string]func(v *yaml.Node, path string)

// object calls the handler of each key of n, reporting unknown and duplicate keys.
func (d *decoder) object(n *yaml.Node, path string, fs fields) {
	if n.Kind != yaml.MappingNode {
		d.add(n.Line, path, "want an object, got "+v1alpha1.NodeKind(n))
		return
	}
	known := make([]string, 0, len(fs))
	for k := range fs {
		known = append(known, k)
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := join(path, k.Value)
		if !d.spend(v, p) {
			return
		}
		if first, dup := seen[k.Value]; dup {
			d.add(k.Line, p, fmt.Sprintf("duplicate key (first at line %d)", first))
			continue
		}
		seen[k.Value] = k.Line
		d.lines[p] = k.Line
		h, ok := fs[k.Value]
		if !ok {
			d.add(k.Line, p, "unknown field"+v1alpha1.Suggest(k.Value, known))
			continue
		}
		if v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		h(v, p)
	}
}

// str is a string scalar.
func (d *decoder) str(n *yaml.Node, path string, into *string) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.add(n.Line, path, "want a string, got "+v1alpha1.NodeKind(n))
		return
	}
	if n.Tag != "!!str" {
		d.add(n.Line, path, fmt.Sprintf("want a string, got %s: quote it (\"%s\") if you mean the text", v1alpha1.NodeKind(n), n.Value))
		return
	}
	*into = n.Value
}

func (d *decoder) root(n *yaml.Node) {
	d.lines = map[string]int{"": n.Line}
	var apiVersion, kind string
	var specNode *yaml.Node
	d.object(n, "", fields{
		"apiVersion": func(v *yaml.Node, p string) { d.str(v, p, &apiVersion) },
		"kind":       func(v *yaml.Node, p string) { d.str(v, p, &kind) },
		"metadata": func(v *yaml.Node, p string) {
			d.object(v, p, fields{"name": func(v *yaml.Node, p string) { d.str(v, p, &d.f.Name) }})
		},
		"spec": func(v *yaml.Node, p string) { specNode = v },
	})
	if apiVersion != APIVersion {
		d.add(d.lineOr("apiVersion", n.Line), "apiVersion", fmt.Sprintf("is %q, want %q", apiVersion, APIVersion))
	}
	if kind != KindName {
		d.add(d.lineOr("kind", n.Line), "kind", fmt.Sprintf("is %q, want %q", kind, KindName))
	}
	if specNode == nil {
		d.add(n.Line, "spec", "is missing: a fleet needs spec.meshID and spec.clusters")
		return
	}
	d.spec(specNode)
}

func (d *decoder) lineOr(path string, def int) int {
	if l, ok := d.lines[path]; ok {
		return l
	}
	return def
}

func (d *decoder) spec(n *yaml.Node) {
	d.object(n, "spec", fields{
		"meshID": func(v *yaml.Node, p string) { d.str(v, p, &d.f.MeshID) },
		"trust": func(v *yaml.Node, p string) {
			d.object(v, p, fields{"cacerts": func(v *yaml.Node, p string) { d.f.CACerts = d.cacerts(v, p) }})
		},
		"istioOperator": func(v *yaml.Node, p string) { d.f.Shared = d.iop(v, p) },
		"clusters": func(v *yaml.Node, p string) {
			if v.Kind != yaml.SequenceNode {
				d.add(v.Line, p, "want a list, got "+v1alpha1.NodeKind(v))
				return
			}
			for i, item := range v.Content {
				p := fmt.Sprintf("%s[%d]", p, i)
				if !d.spend(item, p) {
					return
				}
				d.cluster(item, p)
			}
		},
	})
}

func (d *decoder) cluster(n *yaml.Node, path string) {
	c := &Cluster{Line: n.Line}
	d.lines[path] = n.Line
	var role string
	d.object(n, path, fields{
		"name":               func(v *yaml.Node, p string) { d.str(v, p, &c.Name) },
		"context":            func(v *yaml.Node, p string) { d.str(v, p, &c.Context) },
		"network":            func(v *yaml.Node, p string) { d.str(v, p, &c.Network) },
		"role":               func(v *yaml.Node, p string) { d.str(v, p, &role) },
		"primary":            func(v *yaml.Node, p string) { d.str(v, p, &c.Primary) },
		"remotePilotAddress": func(v *yaml.Node, p string) { d.str(v, p, &c.RemotePilotAddress) },
		"cacerts":            func(v *yaml.Node, p string) { c.CACerts = d.cacerts(v, p) },
		"overlay":            func(v *yaml.Node, p string) { c.Overlay = d.iop(v, p) },
	})
	c.Role = Role(role)
	d.f.Clusters = append(d.f.Clusters, c)
}

// cacerts is a cacerts set: a directory holding upstream's four files.
func (d *decoder) cacerts(n *yaml.Node, path string) *CACerts {
	cc := &CACerts{}
	d.object(n, path, fields{"dir": func(v *yaml.Node, p string) { d.str(v, p, &cc.Dir) }})
	if cc.Dir == "" {
		d.add(n.Line, join(path, "dir"), "is missing: name the directory holding "+strings.Join(CACertsFiles, ", "))
		return cc
	}
	dir := cc.Dir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(d.f.Dir, dir)
	}
	cc.Files = map[string]string{}
	var missing []string
	for _, name := range CACertsFiles {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			missing = append(missing, name)
			continue
		}
		cc.Files[name] = p
	}
	if len(missing) > 0 {
		d.add(d.line(join(path, "dir")), join(path, "dir"), fmt.Sprintf("%s lacks %s: a cacerts set is the four files %s (upstream's tools/certs writes them)", cc.Dir, strings.Join(missing, ", "), strings.Join(CACertsFiles, ", ")))
	}
	return cc
}

// iop decodes an IstioOperator spec embedded in the file.
func (d *decoder) iop(n *yaml.Node, path string) *spec.Doc {
	tree, lines, ps := v1alpha1.DecodeSpecNode(d.source, n, path, d.budget)
	d.problems = append(d.problems, ps...)
	return &spec.Doc{Source: d.source, Tree: tree, Lines: lines}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
