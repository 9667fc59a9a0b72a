package v1alpha1

import (
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"
)

// Problem is one thing wrong (or, when Warning, worth saying) about an input: where it is
// and what to do about it.
type Problem struct {
	// Source is the file name, "<stdin>", "--set a.b=c" or a profile name.
	Source string
	// Line is 1-based; 0 when unknown (e.g. --set).
	Line int
	// Path is the field path, e.g. spec.components.pilot.k8s.replicaCount.
	Path    string
	Msg     string
	Warning bool
}

func (p Problem) Error() string {
	var b strings.Builder
	if p.Source != "" {
		b.WriteString(p.Source)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is a list of problems; as an error it lists every one.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	if len(ps) == 1 {
		return lines[0]
	}
	return fmt.Sprintf("%d problems:\n  %s", len(ps), strings.Join(lines, "\n  "))
}

// Errors returns the problems that are not warnings.
func (ps Problems) Errors() Problems {
	var out Problems
	for _, p := range ps {
		if !p.Warning {
			out = append(out, p)
		}
	}
	return out
}

// Warnings returns the problems that are warnings.
func (ps Problems) Warnings() Problems {
	var out Problems
	for _, p := range ps {
		if p.Warning {
			out = append(out, p)
		}
	}
	return out
}

// Err returns the errors as an error, or nil when there are none.
func (ps Problems) Err() error {
	if errs := ps.Errors(); len(errs) > 0 {
		return errs
	}
	return nil
}

// Lines maps each field path of a decoded file (spec.components.pilot.enabled,
// spec.components.ingressGateways[0]) to its line.
type Lines map[string]int

// DecodeFile parses one IstioOperator YAML document and checks it against the schema.
// It returns the document as a generic tree (maps, lists, scalars; scalars typed by the
// schema), the line of every field, and every problem found, with its line.
func DecodeFile(source string, data []byte) (map[string]any, Lines, Problems) {
	d := &decoder{source: source, lines: Lines{}, budget: NewBudget(source)}
	docs, problem := Documents(source, data)
	if problem != nil {
		return nil, nil, Problems{*problem}
	}
	switch len(docs) {
	case 0:
		return map[string]any{}, d.lines, Problems{{Source: source, Msg: "no IstioOperator in the file (it is empty)", Warning: true}}
	case 1:
	default:
		return nil, nil, Problems{{Source: source, Line: docs[1].Line, Msg: fmt.Sprintf("%d YAML documents in one file; an install spec file holds exactly one IstioOperator: split it into several -f files", len(docs))}}
	}
	root := docs[0].Content[0]
	v := d.node(root, SpecSchema(), "")
	tree, ok := v.(map[string]any)
	if !ok {
		if len(d.problems) == 0 {
			d.add(root, "", "the document is not an IstioOperator object")
		}
		return nil, nil, d.problems
	}
	d.checkHeader(root, tree)
	// A top-level section present but empty (`spec:`, `spec: ~`) sets nothing, as upstream
	// reads it: left as a null it would replace the profile's whole spec.
	for _, key := range []string{"spec", "metadata"} {
		if v, ok := tree[key]; ok && v == nil {
			delete(tree, key)
		}
	}
	return tree, d.lines, d.problems
}

// Documents parses the YAML documents of data, leaving out empty ones (after a trailing
// ---); a syntax error is a Problem with its line.
func Documents(source string, data []byte) ([]*yaml.Node, *Problem) {
	var docs []*yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, &Problem{Source: source, Line: yamlErrorLine(err), Msg: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
		}
		if len(n.Content) == 0 || (n.Content[0].Kind == yaml.ScalarNode && n.Content[0].Tag == "!!null") {
			continue
		}
		docs = append(docs, &n)
	}
}

// checkHeader reads apiVersion and kind as upstream does: a file without a kind is not an
// IstioOperator (upstream refuses it too); a missing or misspelled apiVersion, or a kind that
// is not IstioOperator, is read as an IstioOperator all the same, with a warning, since the
// fields below decide what is installed and each of them is checked.
func (d *decoder) checkHeader(root *yaml.Node, tree map[string]any) {
	switch av, _ := tree["apiVersion"].(string); {
	case av == "":
		d.warn(keyNode(root, "apiVersion", root), "apiVersion", fmt.Sprintf("is missing (want %q); read as an IstioOperator all the same, as upstream does", APIVersion))
	case av != APIVersion:
		d.warn(keyNode(root, "apiVersion", root), "apiVersion", fmt.Sprintf("is %q, want %q; read as an IstioOperator all the same, as upstream does", av, APIVersion))
	}
	switch k, _ := tree["kind"].(string); {
	case k == "":
		d.add(keyNode(root, "kind", root), "kind", fmt.Sprintf("is missing: an install spec file is an IstioOperator (kind: %s)", KindName))
	case k != KindName:
		d.warn(keyNode(root, "kind", root), "kind", fmt.Sprintf("is %q, want %q; read as an IstioOperator all the same, as upstream does", k, KindName))
	}
}

func keyNode(m *yaml.Node, key string, fallback *yaml.Node) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return fallback
}

type decoder struct {
	source   string
	problems Problems
	lines    Lines
	budget   *Budget
}

// spend counts a visited node; false once the file has expanded past MaxNodes.
func (d *decoder) spend(n *yaml.Node, path string) bool {
	return d.budget.Spend(n, path, &d.problems)
}

func (d *decoder) add(n *yaml.Node, path, msg string) {
	d.problems = append(d.problems, Problem{Source: d.source, Line: n.Line, Path: path, Msg: msg})
}

func (d *decoder) warn(n *yaml.Node, path, msg string) {
	d.problems = append(d.problems, Problem{Source: d.source, Line: n.Line, Path: path, Msg: msg, Warning: true})
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// node converts n to a generic value while checking it against s.
func (d *decoder) node(n *yaml.Node, s Schema, path string) any {
	if !d.spend(n, path) {
		return nil
	}
	if n.Kind == yaml.AliasNode {
		return d.node(n.Alias, s, path)
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	kind := s.Kind()
	switch kind {
	case KindAny:
		return d.generic(n, path)
	case KindOpaque:
		v := d.generic(n, path)
		if err := s.CheckOpaque(v); err != nil {
			d.add(n, path, "invalid value: "+cleanJSONError(err))
		}
		return v
	case KindObject, KindMap:
		if n.Kind != yaml.MappingNode {
			d.add(n, path, "want an object, got "+NodeKind(n))
			return nil
		}
		out := map[string]any{}
		d.mapping(n, path, func(k *yaml.Node, v *yaml.Node) {
			key := k.Value
			p := join(path, key)
			if kind == KindMap {
				out[key] = d.node(v, s.Elem(), p)
				return
			}
			fs, ok := s.Field(key)
			if !ok {
				if s.Strict() {
					d.add(k, p, unknownField(key, s.FieldNames()))
				}
				out[key] = d.generic(v, p)
				return
			}
			if fs.Deprecated() {
				msg := "is deprecated"
				if dep, ok := deprecationAt(p); ok {
					msg = dep.Warning()
				}
				d.warn(k, p, msg)
			}
			out[key] = d.node(v, fs, p)
		})
		return out
	case KindList:
		if n.Kind != yaml.SequenceNode {
			d.add(n, path, "want a list, got "+NodeKind(n))
			return nil
		}
		out := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			d.lines[p] = item.Line
			out = append(out, d.node(item, s.Elem(), p))
		}
		return out
	}
	if n.Kind != yaml.ScalarNode {
		d.add(n, path, "want "+kindName(kind)+", got "+NodeKind(n))
		return nil
	}
	v, err := ScalarFor(s, n.Value, n.Tag == "!!str" && n.Style != 0)
	if err != nil {
		d.add(n, path, err.Error())
	}
	return v
}

// ScalarFor converts the text of a scalar to the type s wants. quoted says the text was a
// quoted string, which never becomes a number or a boolean.
func ScalarFor(s Schema, text string, quoted bool) (any, error) {
	switch kind := s.Kind(); kind {
	case KindString:
		if n, ok := s.(enumNumbers); ok && !quoted {
			// protobuf's JSON takes an enum's number for its name, so istiod does too
			if v, ok := n.EnumNumber(text); ok {
				return v, nil
			}
		}
		if enum := s.Enum(); len(enum) > 0 && !contains(enum, text) {
			return text, fmt.Errorf("%q is not one of %s%s", text, strings.Join(enum, ", "), Suggest(text, enum))
		}
		if s.Duration() && !durationRE().MatchString(text) {
			return text, fmt.Errorf("want a duration in seconds such as 5s or 0.5s, got %q", text)
		}
		if !s.ScalarString() && !quoted {
			if _, isNum := typedScalar(text).(string); !isNum && text != "" {
				if b, ok := typedScalar(text).(bool); ok {
					return text, fmt.Errorf("want a string, got the boolean %v: quote it (\"%s\") if you mean the text", b, text)
				}
				return text, fmt.Errorf("want a string, got the number %s: quote it (\"%s\") if you mean the text", text, text)
			}
		}
		return text, nil
	case KindInt:
		i, err := strconv.ParseInt(text, 10, 64)
		if n, ok := s.(NumbersAsText); ok && quoted && err == nil && n.NumbersAsText() {
			return text, nil // kept as written, as upstream passes it on
		}
		if err != nil || quoted {
			return text, fmt.Errorf("want an integer, got %q", text)
		}
		return i, nil
	case KindFloat:
		f, err := strconv.ParseFloat(text, 64)
		if n, ok := s.(NumbersAsText); ok && quoted && err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) && n.NumbersAsText() {
			return text, nil // kept as written, as upstream passes it on
		}
		if err != nil || quoted || math.IsNaN(f) || math.IsInf(f, 0) {
			return text, fmt.Errorf("want a number, got %q", text)
		}
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return i, nil
		}
		return f, nil
	case KindBool:
		b, err := strconv.ParseBool(text)
		if err != nil || quoted || (text != "true" && text != "false") {
			return text, fmt.Errorf("want true or false, got %q", text)
		}
		return b, nil
	case KindAny, KindScalar:
		if quoted {
			return text, nil
		}
		return typedScalar(text), nil
	case KindOpaque:
		var v any = text
		if !quoted {
			v = typedScalar(text)
		}
		if err := s.CheckOpaque(v); err != nil {
			return v, fmt.Errorf("invalid value: %s", cleanJSONError(err))
		}
		return v, nil
	default:
		return text, fmt.Errorf("want %s, got the scalar %q", kindName(kind), text)
	}
}

var durationRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-?[0-9]+(\.[0-9]{1,9})?s$`) })

// typedScalar types an unquoted scalar as upstream's --set does: integer, then float, then
// boolean, else string.
func typedScalar(text string) any {
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(text, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) &&
		strings.ContainsAny(text, "0123456789") && !strings.ContainsAny(text, "xXpP_") {
		return f
	}
	switch text {
	case "true":
		return true
	case "false":
		return false
	}
	return text
}

// generic converts n without a schema (free-form values).
func (d *decoder) generic(n *yaml.Node, path string) any {
	if !d.spend(n, path) {
		return nil
	}
	switch n.Kind {
	case yaml.AliasNode:
		return d.generic(n.Alias, path)
	case yaml.MappingNode:
		out := map[string]any{}
		d.mapping(n, path, func(k, v *yaml.Node) { out[k.Value] = d.generic(v, join(path, k.Value)) })
		return out
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			out = append(out, d.generic(item, fmt.Sprintf("%s[%d]", path, i)))
		}
		return out
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil
		case "!!int", "!!float", "!!bool":
			return typedScalar(n.Value)
		}
		return n.Value
	}
	return nil
}

// mapping calls f for each key/value pair of n, reporting non-string and duplicate keys and
// following YAML merge keys (<<).
func (d *decoder) mapping(n *yaml.Node, path string, f func(k, v *yaml.Node)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Tag == "!!merge" {
			src := v
			if src.Kind == yaml.AliasNode {
				src = src.Alias
			}
			if src.Kind == yaml.MappingNode {
				d.mapping(src, path, f)
				continue
			}
		}
		if k.Kind != yaml.ScalarNode {
			d.add(k, path, "a key must be a string, got "+NodeKind(k))
			continue
		}
		if line, dup := seen[k.Value]; dup {
			// upstream's YAML reader keeps the last one; so do we, with a word
			d.warn(k, join(path, k.Value), fmt.Sprintf("duplicate key (first at line %d): the last one counts, as upstream reads it", line))
		}
		seen[k.Value] = k.Line
		d.lines[join(path, k.Value)] = k.Line
		f(k, v)
	}
}

// NodeKind names what n is, for a "want X, got Y" message.
func NodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("the scalar %q", n.Value)
	}
	return "something else"
}

func unknownField(key string, known []string) string {
	return "unknown field" + Suggest(key, known)
}

// Suggest returns "; did you mean X?" for the closest known name, if one is close.
func Suggest(key string, known []string) string {
	best, bestD := "", 1<<30
	for _, k := range known {
		if d := distance(strings.ToLower(key), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" && bestD <= max(2, len(key)/3) {
		return "; did you mean " + best + "?"
	}
	return ""
}

// distance is the Levenshtein edit distance.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func contains(list []string, s string) bool {
	i := sort.SearchStrings(list, s)
	if i < len(list) && list[i] == s {
		return true
	}
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func cleanJSONError(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	return msg
}

// yamlErrorLine pulls the line number out of a yaml.v3 syntax error ("yaml: line 3: ...").
func yamlErrorLine(err error) int {
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		rest := msg[i+5:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(rest[:j]); err == nil {
			return n
		}
	}
	return 0
}
