package render

import (
	"reflect"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// renderValues gives what Helm's ToRenderValues gives, and leaves the chart's values as
// they were.
func TestRenderValuesAsHelm(t *testing.T) {
	defaults := func() map[string]any {
		return map[string]any{
			"a": "x", "n": 1.0, "gone": "y", "list": []any{"p", map[string]any{"q": 1.0}},
			"t":      map[string]any{"b": "c", "d": map[string]any{"e": "f"}, "nulled": "z", "l": []any{"m"}},
			"scalar": "s", "nil": nil,
		}
	}
	cases := []struct {
		name string
		vals map[string]any
	}{
		{"none", nil},
		{"empty", map[string]any{}},
		{"scalars", map[string]any{"a": "y", "n": 2.0, "new": true}},
		{"null removes", map[string]any{"gone": nil, "absent": nil}},
		{"tables merge", map[string]any{"t": map[string]any{"b": "o", "d": map[string]any{"g": "h"}, "nulled": nil}}},
		{"table over scalar", map[string]any{"scalar": map[string]any{"k": "v"}}},
		{"scalar over table", map[string]any{"t": "flat"}},
		{"table over nil", map[string]any{"nil": map[string]any{"k": "v"}}},
		{"list replaces", map[string]any{"list": []any{"r"}, "t": map[string]any{"l": []any{}}}},
	}
	opts := chartutil.ReleaseOptions{Name: "istio", Namespace: "ns", Revision: 1, IsInstall: true}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "1.0.0"}, Values: defaults()}
			want, err := chartutil.ToRenderValues(ch, copyVals(c.vals), opts, chartutil.DefaultCapabilities)
			if err != nil {
				t.Fatal(err)
			}
			got, err := renderValues(ch, copyVals(c.vals), opts, chartutil.DefaultCapabilities)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %v\nwant %v", got, want)
			}
			if !reflect.DeepEqual(ch.Values, defaults()) {
				t.Errorf("the chart's values changed: %v", ch.Values)
			}
		})
	}
}

func copyVals(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return deepCopyMap(m)
}
