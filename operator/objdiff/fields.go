package objdiff

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Fields lists the paths of the fields that differ between live and next, as Diff compares
// them (server-owned metadata, status and the annotations named in ignore left out), sorted:
// "spec.replicas", "data.mesh", "spec.template.spec.containers[discovery].image". A path
// names a field, never its value, so a Secret's changed keys are listed without what they
// hold. List elements are named by their "name" field when every element has one, by index
// otherwise; a list whose elements cannot be matched is one path.
func Fields(live, next *unstructured.Unstructured, ignoreAnnotations ...string) []string {
	a, b := normalize(live, ignoreAnnotations), normalize(next, ignoreAnnotations)
	delete(a, "apiVersion")
	delete(a, "kind")
	delete(b, "apiVersion")
	delete(b, "kind")
	var out []string
	walk("", a, b, &out)
	sort.Strings(out)
	return out
}

func walk(path string, a, b any, out *[]string) {
	if reflect.DeepEqual(a, b) {
		return
	}
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			keys := map[string]bool{}
			for k := range av {
				keys[k] = true
			}
			for k := range bv {
				keys[k] = true
			}
			for k := range keys {
				walk(join(path, k), av[k], bv[k], out)
			}
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			if an, bn, ok := named(av), named(bv), true; ok && an != nil && bn != nil {
				keys := map[string]bool{}
				for k := range an {
					keys[k] = true
				}
				for k := range bn {
					keys[k] = true
				}
				for k := range keys {
					walk(fmt.Sprintf("%s[%s]", path, k), an[k], bn[k], out)
				}
				return
			}
			if len(av) == len(bv) {
				for i := range av {
					walk(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i], out)
				}
				return
			}
		}
	}
	*out = append(*out, path)
}

// join adds key to path; a key with a dot (an annotation, a ConfigMap file) is bracketed so
// the path stays readable.
func join(path, key string) string {
	if strings.ContainsAny(key, ". ") {
		return path + "[" + key + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// named maps the elements of a list by their name field; nil when one has none or two share
// one.
func named(l []any) map[string]any {
	out := make(map[string]any, len(l))
	for _, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			return nil
		}
		name, ok := m["name"].(string)
		if _, dup := out[name]; !ok || dup {
			return nil
		}
		out[name] = e
	}
	return out
}
