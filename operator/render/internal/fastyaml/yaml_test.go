package fastyaml_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"

	"github.com/istioctl-installer/istioctl/operator/render/internal/fastyaml/fastyamltest"
)

// Odd and fuzzed inputs, read and printed as yaml.v3 and yaml.v2 do (fastyamltest); every
// profile's chart output is checked in operator/render, beside the charts.

func TestParseOddInputsAsYAMLv3(t *testing.T) {
	cases := []string{
		"a: 1", "a: b\nc: d\n", "---\na: 1\n---\n\n---\nb: 2\n", "# c\n---\na: 1 # c\nb: 'x' # c\nc: \"y\"\n",
		"a:\n  b:\n  - 1\n  - c: d\n    e: f\n  -\n  - - x\n    - y\n", "a:\n- 1\n- 2\nb: 3\n", "a: [x, \"y\", 'z', 1, true]\nb: []\nc: {}\n",
		"a: |\n  x\n  y\nb: |-\n  x\n\n  y\n\nc: |+\n  x\n\n\nd: 1\n", "a: |2\n   x\n  y\n", "a: |\n\n  x\n", "a: |\n    x\n  y\n",
		"a: |\n  # not a comment\n  x\n# a comment\nb: 1\n", "a: |\nb: 1\n", "a: |-\n\nb: 1\n",
		"a: long plain\n  continued here\n  and here\nb: 1\n", "a: x\n\n  y\n", "a: 'it''s'\nb: \"q\\\"q\\\\n\\n\"\n",
		"a: 0\nb: -1\nc: 007\nd: 0x1F\ne: 1.5\nf: 1e3\ng: .5\nh: .inf\ni: -.inf\nk: 1_000\nl: 0o17\nm: 0b11\nn: +5\n",
		"a: 2001-12-14\nb: 2001-12-14T21:59:43.10-05:00\nc: 12:30\nd: 1.30.0\ne: 123456789012345678901\n",
		"a: ~\nb: null\nc: Null\nd: yes\ne: no\nf: on\ng: off\nh: True\ni: FALSE\nj: y\nk: n\n", "a:\nb:\n  # only a comment\nc: 1\n",
		"\"80\": x\nkind: K\n", "80: x\n", "true: x\n", "a: 1\na: 2\n", "a: &x 1\nb: *x\n", "a: !!str 1\n", "a: >\n  x\n  y\n",
		"a: \"multi\n  line\"\n", "a:\tb\n", "a: b: c\n", "- a\n- b\n", "just a scalar\n", "a: [x,\n  y]\n", "a: {b: c}\n",
		"a: -c\nb: --x=y\nc: -1x\nd: +x\ne: .x\nf: ...x\n", "a: x #c\nb: x#c\nc: 'x'#c\n", "a: \"x\"y\n", "<<: x\n",
		"a:\n    - x\n    - y\n", "a:\n  - x\n - y\n", "a: 1\n b: 2\n", "  a: 1\n  b: 2\n", "  a: 1\nb: 2\n", "a: |\n  x\n \n  y\n   \n",
		"a: |\n  \ta\n", "a: |1\n  x\n", "- |\n  x\n- y\n", "a:\n- |-\n  x\n  y\n- z\n", "key with spaces: v\nk: v with: colon\n",
		"a: \"\\u00e9\"\n", "a: é\nb: 'ü'\n", "%YAML 1.2\n---\na: 1\n", "a: 1\n...\n", "--- # c\na: 1\n", "--- a: 1\n",
		"a: ''\nb: \"\"\nc:\n", "a: [\"*\"]\nb: [ CREATE , UPDATE ]\nc: [a, b,]\n", "a: [a b, c]\n", "a: [1, 2.5, null, ~]\n",
		"a:\n  {}\nb:\n  []\nc:\n  x\n  y\nd:\n  - 1\ne:\n  'q'\nf:\n  |\n  x\n", "- \n  x\n", "a:\n  [x, y]\n  z\n",
		// Block literals: leading, inner and trailing empty and whitespace-only lines under
		// each chomping and with an explicit indentation.
		"a: |2\n\n   x\n \n    \nb: 1\n", "a: |+\n  x\n\n", "a: |-\n  x\n   \n\nb: 1\n", "a: |4\n\n\n     x\n    y\n\n", "a: |\n  x\n\n\n  y\n",
		"a: |+\n\n  x\n  \n", "a: |\n   \n  x\n", "a: |-\n  x\n    y\n   \n  z\n", "a: |\n  x", "a: |+\n  x\n  \n\nb: 1\n",
	}
	for i, c := range cases {
		for _, data := range []string{c, "apiVersion: v1\nkind: K\n" + c, "apiVersion: v1\nkind: K\nspec:\n" + indent(c, "  ")} {
			fastyamltest.Parse(t, fmt.Sprintf("case %d", i), data)
		}
	}
	// yaml.v2's printing (toYaml's) of random values reads back the same.
	rng := rand.New(rand.NewSource(2))
	words := []string{"a", "b c", "1", "007", "1.5", "true", "no", "", " x", "x ", "a: b", "#x", "- x", "'q'", `"d"`,
		"x\ny", "x\n", "\nx", "x\n\n", "  x\n y", strings.Repeat("long words ", 12), "0x10", "~", "null", "é", "-c", "[x]", "{}", "|", ">"}
	var value func(depth int) any
	value = func(depth int) any {
		switch r := rng.Intn(10); {
		case depth < 3 && r < 3:
			m := map[string]any{}
			for n := rng.Intn(4); n > 0; n-- {
				m[words[rng.Intn(len(words))]] = value(depth + 1)
			}
			return m
		case depth < 3 && r < 5:
			var l []any
			for n := rng.Intn(4); n > 0; n-- {
				l = append(l, value(depth+1))
			}
			return l
		case r < 6:
			return rng.Intn(2000) - 1000
		default:
			return words[rng.Intn(len(words))]
		}
	}
	for n := 0; n < 3000; n++ {
		obj := map[string]any{"apiVersion": "v1", "kind": "K", "spec": value(0)}
		b, err := yamlv2.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		fastyamltest.Parse(t, fmt.Sprintf("random %d", n), string(b))
	}
}

func indent(s, by string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = by + l
		}
	}
	return strings.Join(lines, "\n")
}

// FuzzParseAsYAMLv3: whatever fastyaml.Parse reads, it reads as yaml.v3 does.
func FuzzParseAsYAMLv3(f *testing.F) {
	for _, s := range []string{"apiVersion: v1\nkind: K\na:\n- b: |\n    x\n  c: [1, 'y']\n", "---\na: 1 # c\n---\nb:\n  c: d e\n    f\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		fastyamltest.Parse(t, "fuzz", data)
	})
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
			fastyamltest.Emit(t, fmt.Sprintf("case %d %q", i, s), obj)
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
		fastyamltest.Emit(t, fmt.Sprint(o), o)
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
		fastyamltest.Emit(t, fmt.Sprintf("random %q", s), map[string]any{"k": s, "l": []any{s}, s: 1})
	}
}

// FuzzEmitAsYAMLv2: whatever fastyaml.Emit prints, it prints as yaml.v2 does.
func FuzzEmitAsYAMLv2(f *testing.F) {
	f.Add("a b", "k")
	f.Add("x\n y\n", "- k")
	f.Fuzz(func(t *testing.T, s, k string) {
		fastyamltest.Emit(t, "fuzz", map[string]any{k: s, "l": []any{s, map[string]any{k: []any{s}}}, "m": map[string]any{"n": s}})
	})
}
