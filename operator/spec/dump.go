package spec

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Formats of Dump.
const (
	FormatYAML  = "yaml"
	FormatJSON  = "json"
	FormatFlags = "flags"
)

// Dump renders the part of tree at configPath (relative to spec, or starting with spec;
// empty for the whole document) as YAML, JSON, or the --set flags that rebuild it.
func Dump(tree map[string]any, configPath, format string) ([]byte, error) {
	var node any = tree
	if configPath != "" {
		p, err := ParsePath(configPath)
		if err != nil {
			return nil, fmt.Errorf("--config-path %q: %w", configPath, err)
		}
		if p[0].kind != segKey || p[0].Key != "spec" {
			p = append(Path{{Key: "spec", kind: segKey}}, p...)
		}
		if node, err = get(tree, p); err != nil {
			return nil, fmt.Errorf("--config-path %q: %w", configPath, err)
		}
	}
	switch format {
	case FormatYAML, "":
		return yaml.Marshal(node)
	case FormatJSON:
		b, err := json.MarshalIndent(node, "", "  ")
		return append(b, '\n'), err
	case FormatFlags:
		prefix := configPath
		if configPath == "" {
			m, _ := node.(map[string]any)
			node = m["spec"]
		}
		prefix = strings.TrimPrefix(strings.TrimPrefix(prefix, "spec"), ".")
		var lines []string
		flatten(prefix, node, &lines)
		sort.Strings(lines)
		if len(lines) == 0 {
			return nil, nil
		}
		return []byte(strings.Join(lines, "\n") + "\n"), nil
	}
	return nil, fmt.Errorf("output format %q is not supported; use yaml, json or flags", format)
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
