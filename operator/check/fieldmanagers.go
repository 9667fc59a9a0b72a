package check

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// maxFieldsNamed bounds the fields a result names; the rest are counted.
const maxFieldsNamed = 5

// foreignFieldManagers finds, on every object the install applies, fields it sets that
// another field manager owns (a policy engine, a GitOps tool, kubectl edit): the install's
// apply shares them when the values agree and takes them over when they differ (it forces
// conflicts), and the other manager may set them back. The fields a controller takes over
// (ownership.ControllerFields: istiod's caBundle and failurePolicy) are the controller's,
// never declared by a second install, and are left out.
func foreignFieldManagers(ctx context.Context, env *Env) []Result {
	objs := env.Expected()
	live, errs := env.LiveAll(ctx, objs)
	var out []Result
	for i, o := range objs {
		if errs[i] != nil || live[i] == nil {
			continue
		}
		for _, f := range foreignFields(o, live[i]) {
			out = append(out, Result{Object: ref.Of(o).String(), Message: f})
		}
	}
	if len(out) == 0 {
		out = append(out, Result{Object: "(Cluster)", Passed: true, Message: "no other field manager owns a field the install sets"})
	}
	return out
}

// foreignFields says, per other manager of live, which fields of rendered it owns and
// whether the install takes them.
func foreignFields(rendered, live *unstructured.Unstructured) []string {
	type owned struct{ shared, taken []string }
	by := map[string]*owned{}
	for _, mf := range live.GetManagedFields() {
		if mf.Manager == ownership.FieldManager || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
			continue
		}
		set.Leaves().Iterate(func(p fieldpath.Path) {
			want, ok := fieldAt(rendered.Object, p)
			if !ok || controllerField(rendered.GetKind(), p) || p.String() == ".metadata.managedFields" {
				return
			}
			have, _ := fieldAt(live.Object, p)
			o := by[mf.Manager]
			if o == nil {
				o = &owned{}
				by[mf.Manager] = o
			}
			if reflect.DeepEqual(normal(want), normal(have)) {
				o.shared = append(o.shared, p.String())
			} else {
				o.taken = append(o.taken, p.String())
			}
		})
	}
	managers := make([]string, 0, len(by))
	for m := range by {
		managers = append(managers, m)
	}
	sort.Strings(managers)
	var out []string
	for _, m := range managers {
		o := by[m]
		if len(o.taken) > 0 {
			out = append(out, fmt.Sprintf("field manager %s owns %s, which this install sets to another value: the install takes them over (the other manager may set them back)", m, fieldList(o.taken)))
		}
		if len(o.shared) > 0 {
			out = append(out, fmt.Sprintf("field manager %s owns %s, which this install sets to the same value: both keep them, and the install's later changes conflict with it", m, fieldList(o.shared)))
		}
	}
	return out
}

func fieldList(paths []string) string {
	sort.Strings(paths)
	if len(paths) > maxFieldsNamed {
		return strings.Join(paths[:maxFieldsNamed], ", ") + fmt.Sprintf(" and %d more", len(paths)-maxFieldsNamed)
	}
	return strings.Join(paths, ", ")
}

// normal makes numbers comparable across JSON decoders (int64 and float64).
func normal(v any) any {
	switch t := v.(type) {
	case int64:
		return float64(t)
	case int:
		return float64(t)
	}
	return v
}

// controllerField says p is one of the fields a controller takes over.
func controllerField(kind string, p fieldpath.Path) bool {
	for _, f := range ownership.ControllerFields {
		if f.Kind != kind || len(p) != len(f.Path)+2 || p[0].FieldName == nil || *p[0].FieldName != f.List || p[1].Key == nil {
			continue
		}
		match := true
		for i, name := range f.Path {
			if fn := p[i+2].FieldName; fn == nil || *fn != name {
				match = false
			}
		}
		if match {
			return true
		}
	}
	return false
}

// fieldAt walks obj along a managed-fields path: field names, list items by key or by
// value, indexes.
func fieldAt(obj any, p fieldpath.Path) (any, bool) {
	cur := obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[*pe.FieldName]; !ok {
				return nil, false
			}
		case pe.Key != nil:
			l, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			found := false
			for _, it := range l {
				m, _ := it.(map[string]any)
				if m != nil && keyMatches(m, pe) {
					cur, found = m, true
					break
				}
			}
			if !found {
				return nil, false
			}
		case pe.Value != nil:
			l, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			want := fmt.Sprint((*pe.Value).Unstructured())
			found := false
			for _, it := range l {
				if fmt.Sprint(it) == want {
					cur, found = it, true
					break
				}
			}
			if !found {
				return nil, false
			}
		case pe.Index != nil:
			l, ok := cur.([]any)
			if !ok || *pe.Index >= len(l) {
				return nil, false
			}
			cur = l[*pe.Index]
		default:
			return nil, false
		}
	}
	return cur, true
}

func keyMatches(m map[string]any, pe fieldpath.PathElement) bool {
	for _, f := range *pe.Key {
		if fmt.Sprint(normal(m[f.Name])) != fmt.Sprint(normal(f.Value.Unstructured())) {
			return false
		}
	}
	return true
}
