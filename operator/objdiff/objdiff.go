// Package objdiff shows how an object would change: a unified diff of the live object and
// the object a server-side dry run returned, without the fields the server owns and with
// Secret values masked (it tells whether a value changes, never what it is); and how what an
// RBAC object grants would change, rule by rule (RBAC).
package objdiff

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Masked replaces a Secret value in a diff.
const Masked = "***"

// Diff returns the unified diff from live to next ("" when they show no difference).
// Server-owned metadata (managedFields, resourceVersion, generation, uid, creation time),
// status, and the annotations named in ignore are left out.
func Diff(live, next *unstructured.Unstructured, ignoreAnnotations ...string) (string, error) {
	a, b := normalize(live, ignoreAnnotations), normalize(next, ignoreAnnotations)
	if live.GetKind() == "Secret" {
		MaskSecret(a, b, " (before)", " (after)")
	}
	ya, err := yaml.Marshal(a)
	if err != nil {
		return "", err
	}
	yb, err := yaml.Marshal(b)
	if err != nil {
		return "", err
	}
	if string(ya) == string(yb) {
		return "", nil
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(ya)), B: difflib.SplitLines(string(yb)),
		FromFile: "live", ToFile: "after apply", Context: 2,
	})
}

func normalize(o *unstructured.Unstructured, ignore []string) map[string]any {
	c := o.DeepCopy().Object
	delete(c, "status")
	if md, ok := c["metadata"].(map[string]any); ok {
		for _, f := range []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink"} {
			delete(md, f)
		}
		if ann, ok := md["annotations"].(map[string]any); ok {
			for _, k := range ignore {
				delete(ann, k)
			}
			if len(ann) == 0 {
				delete(md, "annotations")
			}
		}
	}
	return c
}

// MaskSecret hides the values of a Secret's data and stringData in two versions of it, a
// and b, by replacing those maps (a and b themselves get the new maps, what they held is not
// modified): equal values both become Masked; different ones become Masked+aChanged and
// Masked+bChanged, so a report still shows which keys change and never what they hold.
func MaskSecret(a, b map[string]any, aChanged, bChanged string) {
	for _, field := range []string{"data", "stringData"} {
		da, _ := a[field].(map[string]any)
		db, _ := b[field].(map[string]any)
		ma, mb := make(map[string]any, len(da)), make(map[string]any, len(db))
		for k, va := range da {
			ma[k] = Masked
			if vb, inB := db[k]; inB && !equalValue(va, vb) {
				ma[k] = Masked + aChanged
			}
		}
		for k, vb := range db {
			mb[k] = Masked
			if va, inA := da[k]; inA && !equalValue(va, vb) {
				mb[k] = Masked + bChanged
			}
		}
		if da != nil {
			a[field] = ma
		}
		if db != nil {
			b[field] = mb
		}
	}
}

func equalValue(a, b any) bool {
	sa, okA := a.(string)
	sb, okB := b.(string)
	return okA && okB && strings.Compare(sa, sb) == 0
}
