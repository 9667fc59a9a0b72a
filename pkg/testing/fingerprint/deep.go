package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Labels left out of the whole-object comparison: they name the chart's version, and our
// charts are versioned 1.30.0 where upstream's unreleased ones say 1.0.0.
var versionLabels = []string{"helm.sh/chart", "app.kubernetes.io/version"}

// Deep is Of with, in each fingerprint, the digest of the whole object as Normalise
// leaves it: two objects with the same digest are the same but for what Normalise drops.
func Deep(objs []*unstructured.Unstructured) map[string]Object {
	out := Of(objs)
	for _, o := range objs {
		key := Key(o)
		fp := out[key]
		fp.Digest = Digest(Normalise(o))
		out[key] = fp
	}
	return out
}

// Digest is a short hash of a normalised object's canonical JSON (map keys sorted).
func Digest(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(fmt.Sprint(v))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Normalise is a copy of the object without what differs from upstream by design:
//   - the chart version labels (versionLabels);
//   - the text of the sidecar injector's templates (the istio-sidecar-injector ConfigMap's
//     config.templates): our charts are written anew, so the Go templates istiod runs at
//     injection time are not upstream's text; their names, and every other key, are compared.
//
// ConfigMap data that parses as YAML (mesh config, values, injector config) is compared as
// data, not text, so formatting alone is not a difference.
func Normalise(o *unstructured.Unstructured) map[string]any {
	m := o.DeepCopy().Object
	dropVersionLabels(m)
	switch o.GetKind() {
	case "ConfigMap":
		data, _ := m["data"].(map[string]any)
		for k, v := range data {
			s, ok := v.(string)
			if !ok {
				continue
			}
			var parsed any
			if err := yaml.Unmarshal([]byte(s), &parsed); err != nil {
				continue
			}
			if tree, ok := parsed.(map[string]any); ok {
				if k == "config" && strings.HasPrefix(o.GetName(), "istio-sidecar-injector") {
					if t, ok := tree["templates"].(map[string]any); ok {
						for name := range t {
							t[name] = "(template text not compared)"
						}
					}
				}
				data[k] = tree
			}
		}
	}
	return m
}

func dropVersionLabels(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if k == "labels" {
				if l, ok := x.(map[string]any); ok {
					for _, drop := range versionLabels {
						delete(l, drop)
					}
				}
			}
			dropVersionLabels(x)
		}
	case []any:
		for _, x := range t {
			dropVersionLabels(x)
		}
	}
}

// Leaves flattens a normalised object into path -> compact JSON value, one entry per scalar
// (and per empty map or list); list items with a name are addressed by it: containers[discovery].
func Leaves(v any) map[string]string {
	out := map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch t := v.(type) {
		case map[string]any:
			if len(t) == 0 {
				out[path] = "{}"
			}
			for k, x := range t {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, x)
			}
		case []any:
			if len(t) == 0 {
				out[path] = "[]"
			}
			for i, x := range t {
				idx := fmt.Sprint(i)
				if m, ok := x.(map[string]any); ok {
					if n, ok := m["name"].(string); ok {
						idx = n
					}
				}
				walk(fmt.Sprintf("%s[%s]", path, idx), x)
			}
		default:
			out[path] = compact(t)
		}
	}
	walk("", v)
	return out
}

// DiffLeaves lists the paths where two normalised objects differ, one line each.
func DiffLeaves(want, got any) []string {
	w, g := Leaves(want), Leaves(got)
	paths := map[string]bool{}
	for p := range w {
		paths[p] = true
	}
	for p := range g {
		paths[p] = true
	}
	var sorted []string
	for p := range paths {
		if w[p] != g[p] {
			sorted = append(sorted, p)
		}
	}
	sort.Strings(sorted)
	out := make([]string, 0, len(sorted))
	for _, p := range sorted {
		wv, gv := w[p], g[p]
		if wv == "" {
			wv = "(absent)"
		}
		if gv == "" {
			gv = "(absent)"
		}
		out = append(out, fmt.Sprintf("%s: upstream %s, ours %s", p, truncate(wv), truncate(gv)))
	}
	return out
}

func truncate(s string) string {
	if len(s) > 160 {
		return s[:157] + "..."
	}
	return s
}
