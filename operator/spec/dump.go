package spec

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// YAML is tree as YAML: the spec an install record keeps and profile diff compares. It is
// yaml.Marshal (JSON, then JSON to YAML) with the characters JSON leaves raw and the YAML
// reader under JSONToYAML refuses (DEL, C1 controls, U+FFFE, U+FFFF) escaped in between:
// a spec that resolves always dumps (a --set of one such character in a free-form key lost
// the install record's spec, fuzzer).
func YAML(tree map[string]any) ([]byte, error) {
	j, err := json.Marshal(tree)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(escapeUnreadable(j))
}

// escapeUnreadable writes the runes of JSON text j that YAML may not hold raw as \u escapes:
// they only occur inside strings, where an escape means the same.
func escapeUnreadable(j []byte) []byte {
	var out []byte
	for i := 0; i < len(j); {
		r, n := utf8.DecodeRune(j[i:])
		if r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0xfffe || r == 0xffff {
			if out == nil {
				out = append(make([]byte, 0, len(j)+16), j[:i]...)
			}
			out = fmt.Appendf(out, `\u%04x`, r)
		} else if out != nil {
			out = append(out, j[i:i+n]...)
		}
		i += n
	}
	if out == nil {
		return j
	}
	return out
}

// Select is the part of tree at configPath (relative to spec, or starting with spec; empty
// for the whole document), as profile dump --config-path prints it.
func Select(tree map[string]any, configPath string) (any, error) {
	if configPath == "" {
		return tree, nil
	}
	p, err := ParsePath(configPath)
	if err != nil {
		return nil, fmt.Errorf("--config-path %q: %w", configPath, err)
	}
	if p[0].kind != segKey || p[0].Key != "spec" {
		p = append(Path{{Key: "spec", kind: segKey}}, p...)
	}
	node, err := get(tree, p)
	if err != nil {
		return nil, fmt.Errorf("--config-path %q: %w", configPath, err)
	}
	return node, nil
}

// SetFlags are the --set flags that rebuild node, the part of a tree at configPath
// (Select's), one per leaf, sorted; the whole document's are those of its spec.
func SetFlags(node any, configPath string) []string {
	prefix := configPath
	if configPath == "" {
		m, _ := node.(map[string]any)
		node = m["spec"]
	}
	prefix = strings.TrimPrefix(strings.TrimPrefix(prefix, "spec"), ".")
	var lines []string
	flatten(prefix, node, &lines)
	sort.Strings(lines)
	return lines
}

func get(tree map[string]any, p Path) (any, error) {
	var cur any = tree
	for i, seg := range p {
		here := p[:i+1].String()
		switch seg.kind {
		case segKey:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: %s is %s, not an object", here, p[:i].String(), describe(cur))
			}
			if cur, ok = m[seg.Key]; !ok {
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				return nil, fmt.Errorf("%s: not set (%s has: %s)", here, p[:i].String(), strings.Join(keys, ", "))
			}
		default:
			list, ok := cur.([]any)
			if !ok {
				return nil, fmt.Errorf("%s: %s is %s, not a list", here, p[:i].String(), describe(cur))
			}
			idx, err := findItem(list, seg, p[:i].String())
			if err != nil {
				return nil, err
			}
			if idx >= len(list) {
				return nil, fmt.Errorf("%s: index out of range: the list has %d item(s)", here, len(list))
			}
			cur = list[idx]
		}
	}
	return cur, nil
}

// flatten writes one "path=value" line per leaf.
func flatten(prefix string, v any, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 && prefix != "" {
			return
		}
		for k, v := range t {
			key := strings.ReplaceAll(k, ".", `\.`)
			if prefix != "" {
				key = prefix + "." + key
			}
			flatten(key, v, out)
		}
	case []any:
		for i, v := range t {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), v, out)
		}
	case nil:
	default:
		s := fmt.Sprint(t)
		if str, ok := t.(string); ok {
			s = strings.ReplaceAll(str, ",", `\,`)
		}
		*out = append(*out, "--set "+prefix+"="+s)
	}
}
