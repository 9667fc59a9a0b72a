package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const corpusDir = "../../testdata/conformance"

// TestRecorded runs ours on the cases of the corpus (the fast subset, or every case with
// CONFORMANCE_ALL=1) and compares it with upstream's results as make conformance last
// recorded them: the same verdict and, for accepted cases, the same objects and
// fingerprints (whole objects by digest), or exactly the case's listed deliberate
// difference. No upstream binary is needed.
func TestRecorded(t *testing.T) {
	corpus, err := LoadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := LoadRecorded(filepath.Join(corpusDir, "upstream.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "/nonexistent")
	for _, c := range Subset(corpus.Cases) {
		t.Run(c.ID, func(t *testing.T) {
			up, err := rec.Result(c.ID)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := c.Prepare(dir); err != nil {
				t.Fatal(err)
			}
			ours, err := runOurs(context.Background(), c, dir)
			if err != nil {
				t.Fatal(err)
			}
			ours.Normalised = nil // the record has digests only
			if o := Judge(corpus, c, up, ours); o.Problem != "" {
				t.Errorf("%s\n%s\n(upstream: %s; ours: %s)", o.Problem, strings.Join(o.Diffs, "\n"), cell(up), cell(ours))
			}
		})
	}
	for id := range rec.Cases {
		if !hasCase(corpus, id) {
			t.Errorf("upstream.json records %s, which the corpus no longer has: run make conformance", id)
		}
	}
}

func hasCase(c *Corpus, id string) bool {
	for _, cs := range c.Cases {
		if cs.ID == id {
			return true
		}
	}
	return false
}

// Minimum cases per category (the list) and per class of issue 23.
var minimum = map[string]int{
	"profiles": 10, "components": 12, "gateways": 10, "overlays": 8, "meshconfig": 10,
	"values-k8s": 54, "revisions": 5, "multicluster": 5, "remote": 5, "set-grammar": 8,
	"classes": 20, "files": 10,
}

// TestCorpus keeps the corpus at what the issue asks: at least 150 cases, at least 30%
// rejected by upstream, every category and every class of issue 23 (5 or more) covered,
// and every deliberate difference used by a case and backed by a test that exists.
func TestCorpus(t *testing.T) {
	corpus, err := LoadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := LoadRecorded(filepath.Join(corpusDir, "upstream.json"))
	if err != nil {
		t.Fatal(err)
	}
	rejected := 0
	perCategory, perClass, perDifference := map[string]int{}, map[int]int{}, map[string]int{}
	perInput := map[int]int{}
	for _, c := range corpus.Cases {
		perCategory[c.Category]++
		perClass[c.Class]++
		perInput[c.InputClass]++
		perDifference[c.Difference]++
		if rc, ok := rec.Cases[c.ID]; ok && rc.Verdict == "rejected" {
			rejected++
		}
	}
	if n := len(corpus.Cases); n < 150 {
		t.Errorf("%d cases, want at least 150", n)
	}
	subset := map[string]bool{}
	for _, c := range Subset(corpus.Cases) {
		subset[c.Category] = true
	}
	if n := len(Subset(corpus.Cases)); n < 50 {
		t.Errorf("the fast subset has %d cases, want at least 50", n)
	}
	for _, cat := range Categories {
		if !subset[cat] {
			t.Errorf("the fast subset has no case of %s", cat)
		}
	}
	if pct(rejected, len(corpus.Cases)) < 30 {
		t.Errorf("%d of %d cases rejected by upstream, want at least 30%%", rejected, len(corpus.Cases))
	}
	for cat, n := range minimum {
		if perCategory[cat] < n {
			t.Errorf("category %s: %d cases, want at least %d", cat, perCategory[cat], n)
		}
	}
	for class := 1; class <= 7; class++ {
		if perClass[class] < 5 {
			t.Errorf("class %d of issue 23: %d cases, want at least 5", class, perClass[class])
		}
	}
	for class := 1; class <= InputClasses; class++ {
		if perInput[class] < 5 {
			t.Errorf("input class %d of issue 45: %d cases, want at least 5", class, perInput[class])
		}
	}
	for _, id := range corpus.Order {
		d := corpus.Differences[id]
		if perDifference[id] == 0 {
			t.Errorf("difference %s: no case shows it", id)
		}
		if err := testExists(d.Test); err != nil {
			t.Errorf("difference %s: %v", id, err)
		}
	}
}

// testExists checks a "package-dir TestName" reference: the directory (from the repository
// root) has a _test.go file declaring func TestName.
func testExists(ref string) error {
	dir, name, ok := strings.Cut(ref, " ")
	if !ok {
		return fmt.Errorf("test %q: want \"package-dir TestName\"", ref)
	}
	files, err := filepath.Glob(filepath.Join("../..", dir, "*_test.go"))
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "func "+name+"(") {
			return nil
		}
	}
	return fmt.Errorf("test %s: no func %s in %s/*_test.go", ref, name, dir)
}
