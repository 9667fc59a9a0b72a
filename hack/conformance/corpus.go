package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Case is one input of the corpus: a manifest generate command line and the files it names.
// Its category is the directory it lives in; its ID is category/name.
type Case struct {
	ID       string `json:"-"`
	Category string `json:"-"`
	// About says what the case checks, in one line.
	About string `json:"about"`
	// Args follow `manifest generate` (both tools get the same).
	Args []string `json:"args"`
	// Files are written into the case's working directory before it runs.
	Files map[string]string `json:"files,omitempty"`
	// Class is the spec-fidelity class of issue 23 (1-7) the case belongs to, if any.
	Class int `json:"class,omitempty"`
	// InputClass is the class of issue 45 (real users' files, 1-6) the case belongs to, if any.
	InputClass int `json:"inputClass,omitempty"`
	// Difference names the deliberate difference (differences.yaml) the case shows.
	Difference string `json:"difference,omitempty"`
}

// Difference is a deliberate difference from upstream: why, and the test that keeps it.
type Difference struct {
	ID string `json:"id"`
	// Kind is "verdict" (one tool rejects what the other accepts) or "render" (both accept;
	// the rendered objects differ).
	Kind string `json:"kind"`
	// Ours is, for a verdict difference, what we do: "rejected" or "accepted".
	Ours string `json:"ours,omitempty"`
	// Objects are, for a render difference, the objects that may differ: patterns of their
	// keys (Kind/namespace/name, Kind/name when cluster-scoped), as path.Match reads them.
	Objects []string `json:"objects,omitempty"`
	Reason  string   `json:"reason"`
	// Protects says, for a refusal, what would fail at apply time or be installed broken
	// without it (the rule of issue 45).
	Protects string `json:"protects,omitempty"`
	// Test is the test that backs it: "package-dir TestName".
	Test string `json:"test"`
}

// Corpus is every case and the list of deliberate differences.
type Corpus struct {
	Cases       []Case
	Differences map[string]Difference
	Order       []string // the differences in file order
}

// Categories in the order the report lists them; a case directory not named here is an error.
var Categories = []string{
	"profiles", "components", "gateways", "overlays", "meshconfig", "values-k8s",
	"revisions", "multicluster", "remote", "set-grammar", "classes", "files",
}

// LoadCorpus reads dir/<category>/*.yaml and dir/differences.yaml.
func LoadCorpus(dir string) (*Corpus, error) {
	c := &Corpus{Differences: map[string]Difference{}}
	b, err := os.ReadFile(filepath.Join(dir, "differences.yaml"))
	if err != nil {
		return nil, err
	}
	var diffs []Difference
	if err := yaml.UnmarshalStrict(b, &diffs); err != nil {
		return nil, fmt.Errorf("differences.yaml: %w", err)
	}
	for _, d := range diffs {
		if _, dup := c.Differences[d.ID]; dup {
			return nil, fmt.Errorf("differences.yaml: %s listed twice", d.ID)
		}
		switch {
		case d.Reason == "" || d.Test == "":
			return nil, fmt.Errorf("differences.yaml: %s needs a reason and a test", d.ID)
		case d.Kind == "verdict" && d.Ours != "rejected" && d.Ours != "accepted":
			return nil, fmt.Errorf("differences.yaml: %s: ours must be rejected or accepted", d.ID)
		case d.Kind == "render" && len(d.Objects) == 0:
			return nil, fmt.Errorf("differences.yaml: %s: a render difference names its objects", d.ID)
		case d.Kind == "verdict" && d.Ours == "rejected" && d.Protects == "":
			return nil, fmt.Errorf("differences.yaml: %s: a refusal says what it protects", d.ID)
		case d.Kind != "verdict" && d.Kind != "render":
			return nil, fmt.Errorf("differences.yaml: %s: kind must be verdict or render", d.ID)
		}
		c.Differences[d.ID] = d
		c.Order = append(c.Order, d.ID)
	}
	known := map[string]bool{}
	for _, cat := range Categories {
		known[cat] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if !known[e.Name()] {
			return nil, fmt.Errorf("%s: not a category (%s)", filepath.Join(dir, e.Name()), strings.Join(Categories, ", "))
		}
		files, err := filepath.Glob(filepath.Join(dir, e.Name(), "*.yaml"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			var cs Case
			if err := yaml.UnmarshalStrict(b, &cs); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			cs.Category = e.Name()
			cs.ID = e.Name() + "/" + strings.TrimSuffix(filepath.Base(f), ".yaml")
			if cs.About == "" {
				return nil, fmt.Errorf("%s: about: say what the case checks", f)
			}
			if cs.Difference != "" {
				if _, ok := c.Differences[cs.Difference]; !ok {
					return nil, fmt.Errorf("%s: difference %q is not in differences.yaml", f, cs.Difference)
				}
			}
			c.Cases = append(c.Cases, cs)
		}
	}
	sort.Slice(c.Cases, func(i, j int) bool { return c.Cases[i].ID < c.Cases[j].ID })
	return c, nil
}

// Prepare writes the case's files into dir.
func (c Case) Prepare(dir string) error {
	for name, content := range c.Files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// subsetEvery picks the fast subset make test runs: every subsetEvery-th case of each
// category (in ID order), so each category is in it. CONFORMANCE_ALL=1 runs every case
// (about 3 minutes on 2 cores, where the subset takes well under one).
const subsetEvery = 5

// Subset is the cases TestRecorded runs.
func Subset(cases []Case) []Case {
	if os.Getenv("CONFORMANCE_ALL") != "" {
		return cases
	}
	var out []Case
	seen := map[string]int{}
	for _, c := range cases {
		if seen[c.Category]%subsetEvery == 0 {
			out = append(out, c)
		}
		seen[c.Category]++
	}
	return out
}
