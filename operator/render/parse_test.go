package render

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/manifests"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/spec"

	"github.com/istioctl-installer/istioctl/operator/render/internal/fastyaml"
)

// checkParse says whether fastyaml.Parse read data as yaml.v3 does; fast: it read it itself.
func checkParse(t *testing.T, name, data string) (fast bool) {
	t.Helper()
	want, werr := parseObjects([]byte(data))
	docs, ok := fastyaml.Parse(data)
	if !ok {
		return false
	}
	got, ok := objectsOf(docs)
	if !ok {
		if werr == nil {
			t.Errorf("%s: fastyaml.Parse found a document that is not an object, yaml.v3 did not", name)
		}
		return true
	}
	if werr != nil {
		t.Errorf("%s: fastyaml.Parse read what yaml.v3 rejects (%v):\n%s", name, werr, data)
		return true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: read otherwise than yaml.v3\n--- input\n%s\n--- got\n%#v\n--- want\n%#v", name, data, objs(got), objs(want))
	}
	return true
}

func objs(us []*unstructured.Unstructured) []map[string]any {
	var out []map[string]any
	for _, u := range us {
		out = append(out, u.Object)
	}
	return out
}

func TestParseChartOutputAsYAMLv3(t *testing.T) {
	files, fast := 0, 0
	for _, p := range []string{"default", "demo", "ambient", "remote", "minimal"} {
		res, err := spec.Resolve(spec.Options{Sets: []string{"profile=" + p}})
		if err != nil {
			t.Fatal(err)
		}
		r, _ := NewRenderer("")
		for _, inst := range component.Instances(res.IOP) {
			ch, err := r.Charts.Load(inst.Chart)
			if err != nil {
				t.Fatal(err)
			}
			rv, err := chartutil.ToRenderValues(ch, Values(res.Tree, inst), chartutil.ReleaseOptions{Name: ReleaseName, Namespace: inst.Namespace, Revision: 1, IsInstall: true}, chartutil.DefaultCapabilities)
			if err != nil {
				t.Fatal(err)
			}
			out, err := engine.Render(ch, rv)
			if err != nil {
				t.Fatal(err)
			}
			for name, text := range out {
				if strings.HasSuffix(name, "NOTES.txt") {
					continue
				}
				files++
				if checkParse(t, p+":"+name, text) {
					fast++
				} else {
					t.Logf("yaml.v3 reads %s:%s", p, name)
				}
			}
		}
	}
	// The pre-rendered CRDs too (install parses them whole).
	crds, err := manifests.Charts.ReadFile("charts/base/crds/crd-all.gen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files++
	if checkParse(t, "crd-all.gen.yaml", string(crds)) {
		fast++
	}
	t.Logf("fastyaml.Parse read %d of %d chart files", fast, files)
	if fast < files*9/10 {
		t.Errorf("fastyaml.Parse read %d of %d chart files itself, want at least 90%%", fast, files)
	}
}

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
			checkParse(t, fmt.Sprintf("case %d", i), data)
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
		checkParse(t, fmt.Sprintf("random %d", n), string(b))
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
		checkParse(t, "fuzz", data)
	})
}
