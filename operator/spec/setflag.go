package spec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
)

// SetFlag is one parsed --set path=value.
type SetFlag struct {
	Raw   string
	Path  Path
	Value string
	// lenient sets a field the schema does not know (--force, as upstream's).
	lenient bool
}

// ParseSetFlag parses "path=value" (split at the first =, so values may hold =). The path is
// relative to spec.
func ParseSetFlag(raw string) (SetFlag, error) {
	p, v, ok := strings.Cut(raw, "=")
	if !ok {
		return SetFlag{}, fmt.Errorf("want path=value")
	}
	path, err := ParsePath(strings.TrimSpace(p))
	if err != nil {
		return SetFlag{}, err
	}
	return SetFlag{Raw: raw, Path: path, Value: strings.TrimSpace(v)}, nil
}

// alwaysString lists free-form paths whose --set values stay strings even when they look
// like numbers (upstream's list). Typed fields need no entry: the schema types them.
var alwaysString = []string{
	"values.compatibilityVersion",
	"values.global.tag",
	"meshConfig.defaultConfig.proxyMetadata.",
	"values.meshConfig.defaultConfig.proxyMetadata.",
}

func isAlwaysString(path string) bool {
	for _, a := range alwaysString {
		if path == a || (strings.HasSuffix(a, ".") && strings.HasPrefix(path, a)) {
			return true
		}
	}
	return false
}

// applySet sets f's value in doc (a whole IstioOperator tree), creating maps on the way.
// List selectors see every item, including those that came from a profile; an index may
// name an existing item or, equal to the list's length, append one.
// It returns the concrete path it set (selectors resolved to indexes).
func applySet(doc map[string]any, f SetFlag) (string, error) {
	specSchema, _ := v1alpha1.SpecSchema().Field("spec")
	var concrete string
	spec, err := setIn(doc["spec"], specSchema, f, 0, "spec", &concrete)
	if err != nil {
		return "", v1alpha1.Problem{Source: "--set " + f.Raw, Msg: err.Error()}
	}
	doc["spec"] = spec
	return concrete, nil
}

// setIn sets f's value below node, which is at path here (concrete: list indexes, not
// selectors); the full concrete path is stored in *concrete.
func setIn(node any, s v1alpha1.Schema, f SetFlag, i int, here string, concrete *string) (any, error) {
	if i == len(f.Path) {
		*concrete = here
		return leafValue(s, f)
	}
	seg := f.Path[i]
	switch seg.kind {
	case segKey:
		var next v1alpha1.Schema
		switch s.Kind() {
		case v1alpha1.KindObject:
			fs, ok := s.Field(seg.Key)
			if !ok {
				if s.Strict() && !f.lenient {
					return nil, fmt.Errorf("%s.%s: unknown field%s", here, seg.Key, v1alpha1.Suggest(seg.Key, s.FieldNames()))
				}
				fs, _ = anyField()
			}
			next = fs
		case v1alpha1.KindMap, v1alpha1.KindAny:
			next = s.Elem()
		default:
			return nil, fmt.Errorf("%s is %s, so it has no field %q", here, kindWord(s.Kind()), seg.Key)
		}
		m, ok := node.(map[string]any)
		if node == nil {
			m, ok = map[string]any{}, true
		}
		if !ok {
			return nil, fmt.Errorf("%s is %s, not an object, so it has no field %q", here, describe(node), seg.Key)
		}
		v, err := setIn(m[seg.Key], next, f, i+1, here+"."+strings.ReplaceAll(seg.Key, ".", `\.`), concrete)
		if err != nil {
			return nil, err
		}
		m[seg.Key] = v
		return m, nil
	default:
		if k := s.Kind(); k != v1alpha1.KindList && k != v1alpha1.KindAny {
			return nil, fmt.Errorf("%s is %s, not a list, so %s does not apply", here, kindWord(k), seg)
		}
		list, ok := node.([]any)
		if node == nil {
			list, ok = nil, true
		}
		if !ok {
			return nil, fmt.Errorf("%s is %s, not a list, so %s does not apply", here, describe(node), seg)
		}
		idx, err := findItem(list, seg, here)
		if err != nil {
			return nil, err
		}
		var cur any
		if idx < len(list) {
			cur = list[idx]
		}
		v, err := setIn(cur, s.Elem(), f, i+1, fmt.Sprintf("%s[%d]", here, idx), concrete)
		if err != nil {
			return nil, err
		}
		if idx == len(list) {
			return append(list, v), nil
		}
		list[idx] = v
		return list, nil
	}
}

func findItem(list []any, seg Segment, here string) (int, error) {
	if seg.kind == segIndex {
		if seg.Index > len(list) {
			return 0, fmt.Errorf("%s%s: index out of range: the list has %d item(s); use an index from 0 to %d, %d to add one item, or a [key:value] selector",
				here, seg, len(list), max(len(list)-1, 0), len(list))
		}
		return seg.Index, nil
	}
	var have []string
	for i, item := range list {
		if seg.SelKey == "" {
			if fmt.Sprint(item) == seg.SelValue {
				return i, nil
			}
			have = append(have, fmt.Sprint(item))
			continue
		}
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		if v, ok := m[seg.SelKey]; ok {
			if fmt.Sprint(v) == seg.SelValue {
				return i, nil
			}
			have = append(have, fmt.Sprint(v))
		}
	}
	msg := fmt.Sprintf("%s%s: no item with %s=%s", here, seg, seg.SelKey, seg.SelValue)
	if seg.SelKey == "" {
		msg = fmt.Sprintf("%s%s: no item %q", here, seg, seg.SelValue)
	}
	if len(have) > 0 {
		sort.Strings(have)
		msg += fmt.Sprintf(" (the list has: %s)", strings.Join(have, ", "))
	} else {
		msg += " (the list is empty)"
	}
	return 0, fmt.Errorf("%s", msg)
}

// leafValue types a --set value by the schema of its field: text for string fields, the
// parsed number or boolean for typed ones, and upstream's int → float → bool → string
// guess for free-form values.
func leafValue(s v1alpha1.Schema, f SetFlag) (any, error) {
	where := "spec." + f.Path.String()
	switch s.Kind() {
	case v1alpha1.KindString:
		if len(s.Enum()) > 0 {
			// a name, or (as protobuf's JSON takes it) the number of one
			v, err := v1alpha1.ScalarFor(s, f.Value, false)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			return v, nil
		}
		if s.Duration() {
			if _, err := v1alpha1.ScalarFor(s, f.Value, true); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
		}
		// as upstream, \, stands for a comma (excludeIPRanges=10.0.0.0/8\,192.168.0.0/16)
		return strings.ReplaceAll(f.Value, `\,`, ","), nil
	case v1alpha1.KindAny, v1alpha1.KindScalar:
		if isAlwaysString(f.Path.String()) {
			return f.Value, nil
		}
		v, _ := v1alpha1.ScalarFor(s, f.Value, false)
		if str, ok := v.(string); ok {
			return strings.ReplaceAll(str, `\,`, ","), nil
		}
		return v, nil
	case v1alpha1.KindObject, v1alpha1.KindMap, v1alpha1.KindList:
		return nil, fmt.Errorf("%s is %s; --set takes a single value: set its fields one by one, or use a -f file", where, kindWord(s.Kind()))
	}
	v, err := v1alpha1.ScalarFor(s, f.Value, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return v, nil
}

func anyField() (v1alpha1.Schema, bool) { return v1alpha1.FreeForm(), true }

func kindWord(k v1alpha1.Kind) string {
	switch k {
	case v1alpha1.KindObject, v1alpha1.KindMap:
		return "an object"
	case v1alpha1.KindList:
		return "a list"
	case v1alpha1.KindString:
		return "a string"
	case v1alpha1.KindInt:
		return "an integer"
	case v1alpha1.KindFloat:
		return "a number"
	case v1alpha1.KindBool:
		return "a boolean"
	case v1alpha1.KindScalar:
		return "a single value"
	}
	return "a value"
}

func describe(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("the string %q", v)
	}
	return fmt.Sprintf("the value %v", v)
}
