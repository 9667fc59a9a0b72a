package render

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// FuzzOverlayPatch feeds arbitrary k8s overlay patches (a path, and a JSON value or none
// for a delete) to the path patcher on a rendered-like Deployment: a patch may be
// rejected, never crash; the object stays JSON; and an accepted patch did what it says:
// a set path reads back the value as patched (YAML text as its mapping; an appending index:
// the list's last item), a deleted key or list item is gone. A rejected patch may leave fields it created on the way (the
// render fails as a whole).
func FuzzOverlayPatch(f *testing.F) {
	for _, seed := range []struct{ path, value string }{
		{"spec.replicas", "3"},
		{"spec.template.spec.containers.[name:discovery].args.[1]", `"--monitoringAddr=:9999"`},
		{"spec.template.spec.containers.[name:discovery].args.[:discovery]", ""},
		{"spec.template.spec.containers.[0].env.[name:A].value", `"x"`},
		{"spec.template.spec.containers.[1]", ""},
		{"spec.strategy", ""},
		{"spec.template.metadata.annotations.a\\.b", `{"c":[1,2]}`},
		{"spec.template.spec.tolerations.[0]", `{"key":"k"}`},
		{"metadata.labels.[x]", "1"},
		{"spec.matrix.[0].[1]", ""},
		{"spec.matrix.[1].[0]", "7"},
		{"spec..x", "1"},
		{"[0]", "1"},
		{"spec.replicas.x", "1"},
		{"spec.template.spec.containers.[name:discovery].args.[discovery]", `"x"`},
		{"spec.template.spec.containers.[name:discovery].args.[--monitoring.*]", ""},
		{"spec.template.spec.containers.[name:discovery].args.[-1]", `"--x"`},
		{"spec.template.spec.containers.[0].args.[9]", `"--y"`},
	} {
		f.Add(seed.path, seed.value)
	}
	base, err := ParseObjects([]byte(pilotObjects))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path, value string) {
		obj := base[0].DeepCopy().Object
		// A list of lists too, which no chart renders but a path can address.
		obj["spec"].(map[string]any)["matrix"] = []any{[]any{int64(1), int64(2)}, []any{"a"}}
		p := v1alpha1.Patch{Path: path}
		if value != "" {
			var v any
			if err := json.Unmarshal([]byte(value), &v); err != nil {
				v = value // not JSON: a string, as YAML would read most of them
			}
			p.Value = v
		}
		parsed, perr := spec.ParseOverlayPath(path)
		before := deepCopyMap(obj)
		err := applyPathPatch(obj, p)
		if _, jerr := json.Marshal(obj); jerr != nil {
			t.Fatalf("patch %q left an object that is not JSON: %v", path, jerr)
		}
		if perr != nil && err == nil {
			t.Fatalf("path %q does not parse (%v) but the patch was applied", path, perr)
		}
		if err != nil {
			return
		}
		last := parsed[len(parsed)-1]
		parent, ok := lookupAfter(obj, before, parsed[:len(parsed)-1])
		if !ok {
			t.Fatalf("patch %q applied, but its parent path is not there: %v", path, obj)
		}
		if p.Value != nil {
			if last.Kind() == spec.SegmentSelector {
				return // the new item need not match the selector any more
			}
			if last.Kind() == spec.SegmentIndex {
				list, _ := parent.([]any)
				old, _ := lookupPath(before, parsed[:len(parsed)-1])
				if oldList, _ := old.([]any); last.Index < 0 || last.Index >= len(oldList) {
					if len(list) != len(oldList)+1 || !reflect.DeepEqual(list[len(list)-1], patchValue(p.Value)) {
						t.Fatalf("append %q = %s applied, but the list is %v", path, value, list)
					}
					return
				}
			}
			got, ok := lookupAfter(obj, before, parsed)
			if !ok || !reflect.DeepEqual(got, patchValue(p.Value)) {
				t.Fatalf("patch %q = %s applied, but the path reads %v (found %v)", path, value, got, ok)
			}
			return
		}
		switch last.Kind() {
		case spec.SegmentKey:
			if m, _ := parent.(map[string]any); m != nil {
				if _, still := m[last.Key]; still {
					t.Fatalf("delete %q applied, but the key is still there", path)
				}
			}
		default:
			list, _ := parent.([]any)
			old, _ := lookupPath(before, parsed[:len(parsed)-1])
			if oldList, _ := old.([]any); len(list) != len(oldList)-1 {
				t.Fatalf("delete %q applied, but the list went from %d to %d items: %v", path, len(oldList), len(list), list)
			}
		}
	})
}

// lookupAfter reads path in obj, the patched before, with each list segment at the item it
// selected in before: a patch below a selector can change the item so that the selector no
// longer matches it ("spec.matrix[ ][0]" matches [1 2] by its text, which the delete of [0]
// turns into [2]). Where before lacks the path (the patch created it), it reads obj alone.
func lookupAfter(obj, before any, path spec.Path) (any, bool) {
	idx := make([]int, len(path))
	cur := before
	for i, seg := range path {
		idx[i] = -1
		if cur == nil {
			continue
		}
		if seg.Kind() == spec.SegmentKey {
			m, _ := cur.(map[string]any)
			cur = m[seg.Key]
			continue
		}
		list, _ := cur.([]any)
		j, err := overlayItem(list, seg)
		if err != nil || j >= len(list) {
			cur = nil
			continue
		}
		idx[i], cur = j, list[j]
	}
	cur = obj
	for i, seg := range path {
		if seg.Kind() == spec.SegmentKey {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[seg.Key]; !ok {
				return nil, false
			}
			continue
		}
		list, ok := cur.([]any)
		if !ok {
			return nil, false
		}
		j := idx[i]
		if j < 0 || j >= len(list) {
			var err error
			if j, err = overlayItem(list, seg); err != nil || j == len(list) {
				return nil, false
			}
		}
		cur = list[j]
	}
	return cur, true
}

// lookupPath walks path the way applyPathPatch does, without creating or appending anything.
func lookupPath(obj any, path spec.Path) (any, bool) {
	cur := obj
	for _, seg := range path {
		switch seg.Kind() {
		case spec.SegmentKey:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[seg.Key]; !ok {
				return nil, false
			}
		default:
			list, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			j, err := overlayItem(list, seg)
			if err != nil || j == len(list) {
				return nil, false
			}
			cur = list[j]
		}
	}
	return cur, true
}
