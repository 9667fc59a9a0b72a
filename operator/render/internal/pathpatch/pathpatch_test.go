package pathpatch

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// deployment is a rendered-like istiod Deployment, as the patches of a pilot overlay meet it.
func deployment() map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "istiod", "namespace": "istio-system"},
		"spec": map[string]any{
			"replicas": int64(1),
			"strategy": map[string]any{"rollingUpdate": map[string]any{"maxSurge": "100%", "maxUnavailable": "25%"}},
			"template": map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{"a": "1"}},
				"spec": map[string]any{"containers": []any{
					map[string]any{
						"name": "discovery", "image": "docker.io/istio/pilot:1.30.0",
						"env":       []any{map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "B", "value": "2"}},
						"resources": map[string]any{"requests": map[string]any{"cpu": "500m", "memory": "2Gi"}},
						"args":      []any{"discovery", "--monitoringAddr=:15014"},
					},
					map[string]any{"name": "sidecar", "image": "other"},
				}},
			},
		},
	}
}

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
	f.Fuzz(func(t *testing.T, path, value string) {
		obj := deployment()
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
		before := runtime.DeepCopyJSON(obj)
		err := Apply(obj, p)
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
					if len(list) != len(oldList)+1 || !reflect.DeepEqual(list[len(list)-1], Value(p.Value)) {
						t.Fatalf("append %q = %s applied, but the list is %v", path, value, list)
					}
					return
				}
			}
			got, ok := lookupAfter(obj, before, parsed)
			if !ok || !reflect.DeepEqual(got, Value(p.Value)) {
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
		j, err := Item(list, seg)
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
			if j, err = Item(list, seg); err != nil || j == len(list) {
				return nil, false
			}
		}
		cur = list[j]
	}
	return cur, true
}

// lookupPath walks path the way Apply does, without creating or appending anything.
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
			j, err := Item(list, seg)
			if err != nil || j == len(list) {
				return nil, false
			}
			cur = list[j]
		}
	}
	return cur, true
}

// A delete of an item of a list that is itself a list item (found by FuzzOverlayPatch):
// it used to do nothing and report success.
func TestOverlayDeleteInNestedList(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{"matrix": []any{[]any{int64(1), int64(2)}, []any{"a"}}}}
	if err := Apply(obj, v1alpha1.Patch{Path: "spec.matrix.[0].[1]"}); err != nil {
		t.Fatal(err)
	}
	if got := obj["spec"].(map[string]any)["matrix"]; !reflect.DeepEqual(got, []any{[]any{int64(1)}, []any{"a"}}) {
		t.Errorf("matrix = %v", got)
	}
	if err := Apply(obj, v1alpha1.Patch{Path: "spec.matrix.[1]"}); err != nil {
		t.Fatal(err)
	}
	if got := obj["spec"].(map[string]any)["matrix"]; !reflect.DeepEqual(got, []any{[]any{int64(1)}}) {
		t.Errorf("matrix = %v", got)
	}
}

// TestPatchValueText reads patch values as upstream's tpath does: a string holding a YAML
// mapping (one line with ": ", or several lines with a ":") is that mapping; JSON object
// text, list text and other strings stay text.
func TestPatchValueText(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"block", "runAsUser: 1337\nrunAsNonRoot: true\n", `map[runAsNonRoot:true runAsUser:1337]`},
		{"nested block", "requests:\n  cpu: 250m\n", `map[requests:map[cpu:250m]]`},
		{"one line with colon-space", "tier: control", `map[tier:control]`},
		{"one line without a space", "a:b", `a:b`},
		{"true as text", "true", `true`},
		{"number as text", "8080", `8080`},
		{"JSON object text", `{"a": 1}`, `{"a": 1}`},
		{"list text", "- a: 1\n- b: 2\n", "- a: 1\n- b: 2\n"},
		{"lines without a colon", "one\ntwo\n", "one\ntwo\n"},
		{"a colon in prose over lines", "see:\nthis is not: a map: really\n", "see:\nthis is not: a map: really\n"},
		{"an object", map[string]any{"a": 1.0}, `map[a:1]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Value(tc.in)
			if s := fmt.Sprint(got); s != tc.want {
				t.Errorf("Value(%q) = %s (%T), want %s", tc.in, s, got, tc.want)
			}
		})
	}
}
