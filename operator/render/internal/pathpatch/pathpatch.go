// Package pathpatch applies the path patches of an IstioOperator's k8s overlays
// (components.*.k8s.overlays[].patches) to an object, with upstream's path grammar
// (spec.ParseOverlayPath) and its reading of values. It is its own package so that its fuzz
// target builds without the charts and Helm.
package pathpatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Apply sets (or, without a value, deletes) the field at p.Path, with upstream's
// overlay grammar: a.b.[key:value].c selects a list item by a field; [value] (or [:value])
// the scalar item equal to value or, failing that, the first one value matches as a
// regular expression, as upstream; [N] an index, and [-1] (or N past the end) appends.
func Apply(obj map[string]any, p v1alpha1.Patch) error {
	path, err := spec.ParseOverlayPath(p.Path)
	if err != nil {
		return err
	}
	var parent any = obj
	// replace puts a new value where parent is (lists cannot grow or shrink in place).
	replace := func(any) {}
	// created says parent was made on the way, not found in the object.
	created := false
	for i, seg := range path {
		last := i == len(path)-1
		switch seg.Kind() {
		case spec.SegmentKey:
			m, ok := parent.(map[string]any)
			if !ok {
				return fmt.Errorf("%s is not an object", path[:i])
			}
			if last {
				if p.Value == nil {
					delete(m, seg.Key)
				} else {
					m[seg.Key] = Value(p.Value)
				}
				return nil
			}
			next, ok := m[seg.Key]
			created = !ok
			if !ok {
				next = map[string]any{}
				if k := path[i+1].Kind(); k != spec.SegmentKey {
					next = []any{}
				}
				m[seg.Key] = next
			}
			key := seg.Key
			parent, replace = next, func(v any) { m[key] = v }
		default:
			list, ok := parent.([]any)
			if !ok {
				return fmt.Errorf("%s is not a list", path[:i])
			}
			idx, err := Item(list, seg)
			appending := err == nil && idx == len(list)
			if appending && created && seg.Index != -1 {
				// [N] past the end appends to a list the object has; [-1] also makes one.
				err = errors.New("no such item")
			}
			if err != nil {
				return fmt.Errorf("%s: %w", path[:i+1], err)
			}
			switch {
			case appending && p.Value == nil:
				return fmt.Errorf("%s: no such item to delete (the list has %d)", path[:i+1], len(list))
			case appending:
				var item any = map[string]any{}
				if last {
					item = Value(p.Value)
				} else if path[i+1].Kind() != spec.SegmentKey {
					item = []any{}
				}
				list = append(list, item)
				replace(list)
				if last {
					return nil
				}
			case last && p.Value == nil:
				replace(append(list[:idx:idx], list[idx+1:]...))
				return nil
			case last:
				list[idx] = Value(p.Value)
				return nil
			}
			parent, replace, created = list[idx], func(v any) { list[idx] = v }, appending
		}
	}
	return nil
}

// Item finds the list item seg selects; len(list) means "append".
func Item(list []any, seg spec.Segment) (int, error) {
	if seg.Kind() == spec.SegmentIndex {
		if seg.Index < 0 || seg.Index >= len(list) {
			return len(list), nil
		}
		return seg.Index, nil
	}
	scalars := false
	for j, item := range list {
		if m, ok := item.(map[string]any); ok {
			if seg.SelKey != "" {
				if v, has := m[seg.SelKey]; has && fmt.Sprint(v) == seg.SelValue {
					return j, nil
				}
			}
			continue
		}
		scalars = true
		if fmt.Sprint(item) == seg.ScalarPattern() {
			return j, nil
		}
	}
	if scalars {
		// As upstream, the value is also a regular expression (unanchored).
		if re, err := regexp.Compile(seg.ScalarPattern()); err == nil {
			for j, item := range list {
				if _, isMap := item.(map[string]any); !isMap && re.MatchString(fmt.Sprint(item)) {
					return j, nil
				}
			}
		}
	}
	if seg.SelKey == "" && !scalars && len(list) > 0 {
		return 0, fmt.Errorf("no such item: the list holds objects; select one with [key:value]")
	}
	return 0, fmt.Errorf("no such item")
}

// Value reads a patch's value as upstream does (tpath's tryToUnmarshalStringToYAML): a
// string holding a YAML mapping (one line with ": ", or several lines with a ":") patches
// with that mapping, as the customize-installation docs' "value: |" blocks expect. JSON object
// text, list text and any other string stay text, as upstream leaves them.
func Value(v any) any {
	s, ok := v.(string)
	if !ok {
		return Normalize(v)
	}
	if !utf8.ValidString(s) {
		// As the manifest will print it: JSON turns each invalid byte into U+FFFD.
		s, _ = Normalize(s).(string)
	}
	oneLine := !strings.Contains(s, "\n")
	if !(oneLine && strings.Contains(s, ": ") || !oneLine && strings.Contains(s, ":")) {
		return s
	}
	if json.Unmarshal([]byte(s), &map[string]any{}) == nil {
		return s
	}
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		return s
	}
	return Normalize(m)
}

// Normalize makes numbers JSON-like (int64/float64), as decoded objects hold them.
func Normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return fixNumbers(out)
}

// fixNumbers turns whole float64 numbers into int64, as decoded objects hold them.
func fixNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = fixNumbers(x)
		}
	case []any:
		for i, x := range t {
			t[i] = fixNumbers(x)
		}
	case float64:
		if s := strconv.FormatFloat(t, 'f', -1, 64); !strings.ContainsAny(s, ".e") {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n
			}
		}
	}
	return v
}
