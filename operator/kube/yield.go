package kube

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Yield is the package's Yield with the client's field manager and controller fields.
func (c *Client) Yield(obj *unstructured.Unstructured, managed []metav1.ManagedFieldsEntry) (*unstructured.Unstructured, []string) {
	return Yield(obj, managed, c.fieldManager, c.controllerFields)
}

// Yield returns obj without the controller fields (fields) a field manager other than own
// owns in managed, the live object's managed fields, and names what it left out
// ("webhooks[rev.validation.istio.io].failurePolicy (pilot-discovery)"). obj itself is not
// changed; it is returned as is when nothing is left out.
func Yield(obj *unstructured.Unstructured, managed []metav1.ManagedFieldsEntry, own string, fields []ControllerField) (*unstructured.Unstructured, []string) {
	var rules []ControllerField
	for _, f := range fields {
		if f.Kind == obj.GetKind() {
			rules = append(rules, f)
		}
	}
	if len(rules) == 0 || len(managed) == 0 {
		return obj, nil
	}
	others := othersFields(managed, own)
	if len(others) == 0 {
		return obj, nil
	}
	var out *unstructured.Unstructured
	var yielded []string
	for _, f := range rules {
		items, _, _ := unstructured.NestedSlice(obj.Object, f.List)
		for i, it := range items {
			m, _ := it.(map[string]any)
			name, _ := m["name"].(string)
			if name == "" {
				continue
			}
			if _, has, _ := unstructured.NestedFieldNoCopy(m, f.Path...); !has {
				continue
			}
			parts := []any{f.List, fieldpath.KeyByFields("name", name)}
			for _, p := range f.Path {
				parts = append(parts, p)
			}
			path := fieldpath.MakePathOrDie(parts...)
			var owners []string
			for mgr, set := range others {
				if set.Has(path) {
					owners = append(owners, mgr)
				}
			}
			if len(owners) == 0 {
				continue
			}
			if out == nil {
				out = obj.DeepCopy()
			}
			copied, _, _ := unstructured.NestedSlice(out.Object, f.List)
			cm := copied[i].(map[string]any)
			unstructured.RemoveNestedField(cm, f.Path...)
			_ = unstructured.SetNestedSlice(out.Object, copied, f.List)
			sort.Strings(owners)
			yielded = append(yielded, fmt.Sprintf("%s[%s].%s (%s)", f.List, name, strings.Join(f.Path, "."), strings.Join(owners, ", ")))
		}
	}
	if out == nil {
		return obj, nil
	}
	return out, yielded
}

// othersFields are the field sets of every manager but own, by manager.
func othersFields(managed []metav1.ManagedFieldsEntry, own string) map[string]*fieldpath.Set {
	out := map[string]*fieldpath.Set{}
	for _, mf := range managed {
		if mf.Manager == own || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		s := &fieldpath.Set{}
		if err := s.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
			continue
		}
		if prev, ok := out[mf.Manager]; ok {
			s = prev.Union(s)
		}
		out[mf.Manager] = s
	}
	return out
}
