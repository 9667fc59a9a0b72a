package render

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"

	"github.com/istioctl-installer/istioctl/manifests"
	"github.com/istioctl-installer/istioctl/operator/spec"

	"github.com/istioctl-installer/istioctl/operator/render/internal/fastyaml"
)

// checkEmit says whether fastyaml.Emit printed obj as yaml.v2 does; fast: it printed it itself.
func checkEmit(t *testing.T, name string, obj map[string]any) (fast bool) {
	t.Helper()
	want, err := yamlv2.Marshal(obj)
	if err != nil {
		t.Fatalf("%s: yaml.v2: %v", name, err)
	}
	got, ok := fastyaml.Emit(obj)
	if !ok {
		return false
	}
	if string(got) != string(want) {
		t.Errorf("%s: printed otherwise than yaml.v2\n--- got\n%s\n--- want\n%s", name, got, want)
	}
	return true
}

func TestEmitProfilesAsYAMLv2(t *testing.T) {
	crds, err := manifests.Charts.ReadFile("charts/base/crds/crd-all.gen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := ParseObjects(crds)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"default", "demo", "ambient", "remote"} {
		res, err := spec.Resolve(spec.Options{Sets: []string{"profile=" + p}})
		if err != nil {
			t.Fatalf("profile %s: %v", p, err)
		}
		r, err := NewRenderer("")
		if err != nil {
			t.Fatal(err)
		}
		ms, _, err := r.Render(res)
		if err != nil {
			t.Fatalf("profile %s: %v", p, err)
		}
		objs = append(objs, All(ms)...)
	}
	fast := 0
	for _, o := range objs {
		if checkEmit(t, o.GetKind()+"/"+o.GetName(), o.Object) {
			fast++
		}
	}
	t.Logf("fastyaml.Emit printed %d of %d objects", fast, len(objs))
	// The fast path must carry nearly all of a render, or it saves nothing.
	if fast < len(objs)*9/10 {
		t.Errorf("fastyaml.Emit printed %d of %d objects itself, want at least 90%%", fast, len(objs))
	}
}

func TestEmitOddValuesAsYAMLv2(t *testing.T) {
	long := strings.Repeat("word ", 30)
	strs := []string{
		"", " ", "a", "a b", " a", "a ", "-", "- a", "-a", "--a", "---", "...", "...a", "?", "? a", ":", ": a",
		"a:b", "a: b", "a:", "a #b", "a#b", "#a", "'", "'a'", `"`, `a"b`, `a\b`, "@a", "`a", "%a", "!a", "&a", "*a",
		"|", ">", "[a]", "{a}", "a,b", "true", "True", "yes", "no", "on", "off", "y", "n", "Y", "N", "null", "Null", "~",
		"<<", "1", "01", "0x1F", "0b101", "-0b1", "1_000", "1.5", ".5", "1.", "1e3", "1e+06", "+1", "-1", ".inf",
		"-.inf", ".nan", ".NaN", "1:30", "1:30:00", "2001-12-14", "2001-12-14T21:59:43.10-05:00", "1.30.0", "0.0.0.0",
		"15021", "8080/TCP", "-c", "--log=warn", "+x", ".x", "a\nb", "a\n", "a\n\n", "\n", "\na", " a\nb", "a \nb",
		"a\n b", "a\nb ", "a\n\nb\n", "a\tb", "é", "a" + long, long + "a", strings.Repeat("x", 90) + " y",
		strings.Repeat("x ", 50), "a  " + long, "'" + long, "\"" + long, "1 " + long, "a\n" + long + "\n",
		strings.Repeat("k", 129),
	}
	i := 0
	for _, s := range strs {
		for _, obj := range []map[string]any{
			{"k": s},
			{s: "v"},
			{"a": map[string]any{"list": []any{s, map[string]any{"b": s, "c": []any{s}}}}},
			{"deep": map[string]any{"deeper": map[string]any{"deepest": map[string]any{"k": s, "kk": []any{[]any{s}}}}}},
		} {
			checkEmit(t, fmt.Sprintf("case %d %q", i, s), obj)
			i++
		}
	}
	others := []map[string]any{
		{"e": map[string]any{}, "l": []any{}, "n": nil, "b": true, "f": false},
		{"i": int64(-3), "j": 7, "f": 1.5, "g": 1e6, "h": 1e21, "z": 0.0, "x": float32(0.1)},
		{"l": []any{map[string]any{}, []any{}, nil, []any{[]any{"a", "b"}, "c"}, map[string]any{"a": []any{1, 2}}}},
		{"a1": 1, "a10": 2, "a2": 3, "a01": 4, "a_b": 5, "aB": 6, "ab": 7, "a-b": 8, "A": 9, "1": 10, "10": 11, "2": 12, "x0": 13, "x00": 14},
	}
	for _, o := range others {
		checkEmit(t, fmt.Sprint(o), o)
	}
	// Strings from an alphabet of the characters that change yaml.v2's choices.
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "b", "1", "0", " ", " ", "\n", ":", "#", "-", "'", `"`, ".", "x", "_", "~", "|", "  ", "\\"}
	for n := 0; n < 5000; n++ {
		var b strings.Builder
		for l := rng.Intn(12) + rng.Intn(2)*rng.Intn(120); l > 0; l-- {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		s := b.String()
		checkEmit(t, fmt.Sprintf("random %q", s), map[string]any{"k": s, "l": []any{s}, s: 1})
	}
}

// FuzzEmitAsYAMLv2: whatever fastyaml.Emit prints, it prints as yaml.v2 does.
func FuzzEmitAsYAMLv2(f *testing.F) {
	f.Add("a b", "k")
	f.Add("x\n y\n", "- k")
	f.Fuzz(func(t *testing.T, s, k string) {
		checkEmit(t, "fuzz", map[string]any{k: s, "l": []any{s, map[string]any{k: []any{s}}}, "m": map[string]any{"n": s}})
	})
}
