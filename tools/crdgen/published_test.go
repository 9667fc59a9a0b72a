package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// publishedFile is where istio.io/api ships the CRDs it publishes. Only tests read it: the
// generator works from the .proto sources alone (TestGeneratorReadsOnlyProtos).
const publishedFile = "kubernetes/customresourcedefinitions.gen.yaml"

// difference is one place where two CRDs differ.
type difference struct {
	path        string
	ours, their any
}

// allowed are the classes of difference from the published CRDs, each with its reason:
// a difference outside them fails TestMatchesPublishedCRDs.
var allowed = []struct {
	name, reason string
	match        func(path string) bool
}{
	{"chart labels", "the file carries the base chart's labels, which upstream's chart puts in place of the API's static ones (app: istio-pilot, chart: istio, ...) when it renders the CRDs; istioctl then prints the file as written",
		func(p string) bool { return strings.HasPrefix(p, "metadata.labels") }},
}

// TestMatchesPublishedCRDs compares every generated CRD with the one istio.io/api
// publishes, field by field: equal but for the classes in allowed.
func TestMatchesPublishedCRDs(t *testing.T) {
	mod := apiModuleForTest(t)
	b, err := os.ReadFile(filepath.Join(mod.Dir, publishedFile))
	if err != nil {
		t.Fatal(err)
	}
	theirs := byName(t, b)
	ourText, err := render(mod)
	if err != nil {
		t.Fatal(err)
	}
	ours := byName(t, ourText)
	if got, want := sortedKeys(ours), sortedKeys(theirs); !reflect.DeepEqual(got, want) {
		t.Fatalf("CRDs %v, published %v", got, want)
	}
	used := map[string]int{}
	for _, name := range sortedKeys(ours) {
		var diffs []difference
		compare("", ours[name], theirs[name], &diffs)
		var left []string
		for _, d := range diffs {
			class := ""
			for _, a := range allowed {
				if a.match(d.path) {
					class = a.name
					break
				}
			}
			if class != "" {
				used[class]++
				continue
			}
			left = append(left, fmt.Sprintf("  %s: ours %s, published %s", d.path, show(d.ours), show(d.their)))
		}
		if len(left) > 0 {
			t.Errorf("%s differs from the published CRD in %d places:\n%s", name, len(left), strings.Join(left, "\n"))
		}
	}
	for _, a := range allowed {
		t.Logf("class %q: %d differences (%s)", a.name, used[a.name], a.reason)
	}
}

func show(v any) string {
	if v == nil {
		return "(none)"
	}
	b, _ := yaml.Marshal(v)
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return strings.ReplaceAll(s, "\n", "\n      ")
}

// byName reads a stream of CRDs, keyed by name.
func byName(t *testing.T, b []byte) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if m == nil {
			continue
		}
		md, _ := m["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		out[name] = m
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// compare records where a and b differ, by path (a.b[1].c).
func compare(path string, a, b any, out *[]difference) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			compare(p, am[k], bm[k], out)
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			compare(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, difference{path, a, b})
	}
}
