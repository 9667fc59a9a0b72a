package spec

import (
	"reflect"
	"testing"
)

func TestMerge(t *testing.T) {
	for _, tc := range []struct {
		name          string
		base, overlay map[string]any
		want          map[string]any
	}{
		{"maps deep-merge",
			map[string]any{"a": map[string]any{"x": 1, "y": map[string]any{"p": 1}}},
			map[string]any{"a": map[string]any{"y": map[string]any{"q": 2}, "z": 3}},
			map[string]any{"a": map[string]any{"x": 1, "y": map[string]any{"p": 1, "q": 2}, "z": 3}}},
		{"lists replace",
			map[string]any{"l": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}},
			map[string]any{"l": []any{map[string]any{"name": "c"}}},
			map[string]any{"l": []any{map[string]any{"name": "c"}}}},
		{"scalars replace",
			map[string]any{"s": "a", "n": int64(1)},
			map[string]any{"s": "b"},
			map[string]any{"s": "b", "n": int64(1)}},
		{"a map replaces a scalar",
			map[string]any{"a": "x"},
			map[string]any{"a": map[string]any{"k": true}},
			map[string]any{"a": map[string]any{"k": true}}},
		{"a scalar replaces a map",
			map[string]any{"a": map[string]any{"k": true}},
			map[string]any{"a": "x"},
			map[string]any{"a": "x"}},
		{"null overrides",
			map[string]any{"a": map[string]any{"k": true}},
			map[string]any{"a": nil},
			map[string]any{"a": nil}},
		{"empty overlay keeps base",
			map[string]any{"a": map[string]any{"k": true}},
			map[string]any{},
			map[string]any{"a": map[string]any{"k": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			baseCopy, overlayCopy := deepCopy(tc.base), deepCopy(tc.overlay)
			got := Merge(tc.base, tc.overlay)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Merge = %#v, want %#v", got, tc.want)
			}
			if !reflect.DeepEqual(tc.base, baseCopy) || !reflect.DeepEqual(tc.overlay, overlayCopy) {
				t.Error("Merge modified its inputs")
			}
			// The result shares nothing with the inputs.
			if m, ok := got["a"].(map[string]any); ok {
				m["mutated"] = true
				if bm, ok := tc.base["a"].(map[string]any); ok && bm["mutated"] == true {
					t.Error("result aliases base")
				}
			}
		})
	}
}
