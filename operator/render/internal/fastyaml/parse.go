package fastyaml

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// Parse reads a YAML stream into its documents' values exactly as decoding with yaml.v3
// and JSONValue does, several times faster: yaml.v3 builds a node tree for every document
// before decoding it, and a render parses about 150 KB of chart output. It is hand-written
// because no library decodes straight into JSON's types: it reads block mappings and
// sequences of plain, quoted and literal scalars, one-line flow lists and empty flow
// collections, comments and --- separators, which is what charts print (fastyamltest.Parse
// compares it with yaml.v3 on odd and fuzzed inputs here and every profile's chart output in
// operator/render).
// false: data holds anything else (anchors, tags, folded or multi-line quoted scalars,
// tabs, duplicate keys, ...), which yaml.v3 then reads, errors included.
func Parse(data string) ([]any, bool) {
	if !plainText(data) {
		return nil, false
	}
	// Lines, and the strings read from them, share data's memory.
	p := &parser{lines: make([]string, 0, strings.Count(data, "\n")+1), unterminated: !strings.HasSuffix(data, "\n")}
	for len(data) > 0 {
		line, rest, _ := strings.Cut(data, "\n")
		p.lines, data = append(p.lines, line), rest
	}
	var docs []any
	for {
		p.skipBlank()
		for p.pos < len(p.lines) && isDocStart(p.lines[p.pos]) {
			p.pos++
			p.skipBlank()
		}
		if p.pos >= len(p.lines) {
			return docs, !p.failed
		}
		ind, _ := indentOf(p.lines[p.pos])
		v := p.node(ind)
		if p.failed {
			return nil, false
		}
		p.skipBlank()
		if p.pos < len(p.lines) && !isDocStart(p.lines[p.pos]) {
			return nil, false // more at a lesser indentation: not one node
		}
		docs = append(docs, v)
	}
}

// plainText: valid UTF-8 without control characters (tabs and newlines aside), carriage
// returns, byte order marks or the characters YAML reads as line breaks.
func plainText(data string) bool {
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(data[i:])
		if r == utf8.RuneError || r <= 0x9f || r == 0x2028 || r == 0x2029 || r == 0xfeff || r >= 0xfffe && r <= 0xffff {
			return false
		}
		i += n
	}
	return true
}

type parser struct {
	lines  []string
	pos    int
	failed bool
	// unterminated: the last line has no line break after it.
	unterminated bool
	// the scalars yaml.v3 was asked about (numbers and the like), once each
	resolved map[string]any
}

func isDocStart(l string) bool {
	return l == "---" || strings.HasPrefix(l, "--- #") || strings.HasPrefix(l, "---  #")
}

// indentOf is a line's count of leading spaces; false if it has a tab.
func indentOf(l string) (int, bool) {
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	return n, strings.IndexByte(l, '\t') < 0
}

// blank: empty, spaces or a comment.
func blank(l string) bool {
	t := strings.TrimLeft(l, " ")
	return t == "" || t[0] == '#'
}

func (p *parser) skipBlank() {
	for p.pos < len(p.lines) && blank(p.lines[p.pos]) {
		p.pos++
	}
}

// entry moves to the next non-blank line and returns it if it holds an entry of the
// collection at indentation ind. false at the end or at a lesser indentation (the
// collection ends), and failed too if the line is indented more or has a tab.
func (p *parser) entry(ind int) (string, bool) {
	p.skipBlank()
	if p.pos >= len(p.lines) {
		return "", false
	}
	l := p.lines[p.pos]
	n, ok := indentOf(l)
	if !ok || n > ind {
		p.failed = true
		return "", false
	}
	return l, n == ind
}

// node reads the collection starting at the current line, at indentation ind.
func (p *parser) node(ind int) any {
	l := p.lines[p.pos]
	if _, ok := indentOf(l); !ok {
		p.failed = true
		return nil
	}
	rest := l[ind:]
	if rest == "-" || strings.HasPrefix(rest, "- ") {
		return p.sequence(ind)
	}
	if strings.HasPrefix(rest, "...") || strings.HasPrefix(rest, "---") || rest[0] == '%' {
		p.failed = true
		return nil
	}
	return p.mapping(ind)
}

func (p *parser) sequence(ind int) any {
	out := []any{}
	for !p.failed {
		l, ok := p.entry(ind)
		if !ok || !(l[ind:] == "-" || strings.HasPrefix(l[ind:], "- ")) {
			break
		}
		item := strings.TrimLeft(l[ind+1:], " ")
		if item == "" || item[0] == '#' {
			// The item is on the lines below, or null.
			p.pos++
			out = append(out, p.nested(ind, false))
			continue
		}
		at := len(l) - len(item)
		if item == "-" || strings.HasPrefix(item, "- ") || p.keyAt(item) {
			// A collection starting on the item's line: read that line as if it began at
			// the item's column.
			p.lines[p.pos] = strings.Repeat(" ", at) + item
			out = append(out, p.node(at))
			continue
		}
		out = append(out, p.inline(item, ind))
	}
	return out
}

// nested reads what follows a "key:" or "-" with nothing after it: a node indented more
// than ind (or, under a key, a list at ind itself), else null.
func (p *parser) nested(ind int, underKey bool) any {
	save := p.pos
	p.skipBlank()
	if p.pos >= len(p.lines) {
		return nil
	}
	l := p.lines[p.pos]
	n, ok := indentOf(l)
	if !ok {
		p.failed = true
		return nil
	}
	item := l[n:] == "-" || strings.HasPrefix(l[n:], "- ")
	if n > ind && !item && !p.keyAt(l[n:]) {
		return p.inline(l[n:], ind) // a scalar or flow collection on a line of its own
	}
	if n > ind || underKey && n == ind && item {
		return p.node(n)
	}
	p.pos = save
	return nil
}

// keyAt says whether s starts with a mapping key ("key:" then a space or the end).
func (p *parser) keyAt(s string) bool {
	_, _, ok := splitKey(s)
	return ok
}

// splitKey splits "key: value" (a plain or quoted key).
func splitKey(s string) (key, rest string, ok bool) {
	if s == "" {
		return "", "", false
	}
	if s[0] == '"' || s[0] == '\'' {
		k, n, ok := quoted(s)
		if !ok || n >= len(s) || s[n] != ':' || n+1 < len(s) && s[n+1] != ' ' {
			return "", "", false
		}
		return k, strings.TrimLeft(s[n+1:], " "), true
	}
	i := strings.Index(s, ": ")
	if i < 0 {
		if strings.HasSuffix(s, ":") {
			i = len(s) - 1
		} else {
			return "", "", false
		}
	}
	key = s[:i]
	if key == "" || strings.Contains(key, " #") || strings.HasSuffix(key, " ") || !plainStart(key) {
		return "", "", false
	}
	return key, strings.TrimLeft(s[i+1:], " "), true
}

// plainStart: s may start a plain scalar in block context, as far as read here.
func plainStart(s string) bool {
	switch s[0] {
	case '-', '?', ':':
		return len(s) > 1 && s[1] != ' '
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	return true
}

func (p *parser) mapping(ind int) any {
	out := map[string]any{}
	for !p.failed {
		l, ok := p.entry(ind)
		if !ok || isDocStart(l) {
			break
		}
		if ind == 0 && (strings.HasPrefix(l, "---") || strings.HasPrefix(l, "...")) {
			p.failed = true // a document marker with something after it
			break
		}
		if l[ind:] == "-" || strings.HasPrefix(l[ind:], "- ") {
			break // a list at the same indentation ends this mapping (the caller's)
		}
		key, rest, ok := splitKey(l[ind:])
		if !ok || !p.stringKey(key, l[ind]) {
			p.failed = true
			break
		}
		if _, dup := out[key]; dup {
			p.failed = true
			break
		}
		if rest == "" || rest[0] == '#' {
			p.pos++
			out[key] = p.nested(ind, true)
			continue
		}
		out[key] = p.inline(rest, ind)
	}
	return out
}

// stringKey: a key yaml.v3 reads as a string (first is its first character, a quote if quoted).
func (p *parser) stringKey(k string, first byte) bool {
	if first == '"' || first == '\'' {
		return true
	}
	if k == "<<" {
		return false
	}
	_, isString := p.scalar(k).(string)
	return isString
}

// inline reads the value starting in the current line at s (after "key: " or "- "), in a
// collection at indentation ind, and moves past it.
func (p *parser) inline(s string, ind int) any {
	switch s[0] {
	case '|':
		return p.literal(s, ind)
	case '"', '\'':
		v, n, ok := quoted(s)
		if !ok || !trailingComment(s[n:]) {
			p.failed = true
			return nil
		}
		p.pos++
		return v
	case '[', '{':
		v, ok := p.flow(s)
		if !ok {
			p.failed = true
			return nil
		}
		p.pos++
		return v
	}
	if !plainStart(s) {
		p.failed = true
		return nil
	}
	text := s
	if i := strings.Index(text, " #"); i >= 0 {
		text = text[:i]
	}
	text = strings.TrimRight(text, " ")
	if strings.Contains(text, ": ") || strings.HasSuffix(text, ":") {
		p.failed = true
		return nil
	}
	p.pos++
	// A plain scalar goes on over the lines indented more than its collection (yaml.v2
	// folds long strings so); they join with spaces.
	cont := false
	for p.pos < len(p.lines) {
		l := p.lines[p.pos]
		n, ok := indentOf(l)
		if !ok {
			p.failed = true
			return nil
		}
		if strings.TrimSpace(l) == "" {
			// An empty line within would be a newline: not read here.
			q := p.pos
			for q < len(p.lines) && strings.TrimSpace(p.lines[q]) == "" {
				q++
			}
			if q < len(p.lines) {
				if m, _ := indentOf(p.lines[q]); m > ind {
					p.failed = true
					return nil
				}
			}
			break
		}
		if n <= ind {
			break
		}
		t := strings.TrimRight(l[n:], " ")
		if t[0] == '#' || strings.Contains(t, " #") || strings.Contains(t, ": ") || strings.HasSuffix(t, ":") {
			p.failed = true
			return nil
		}
		text += " " + t
		cont = true
		p.pos++
	}
	if cont {
		return text
	}
	if strings.HasPrefix(text, "...") || strings.HasPrefix(text, "---") {
		p.failed = true
		return nil
	}
	return p.scalar(text)
}

func trailingComment(s string) bool {
	t := strings.TrimLeft(s, " ")
	return t == "" || t[0] == '#' && len(t) < len(s)
}

// scalar resolves a plain scalar as yaml.v3 does (then JSONValue's types).
func (p *parser) scalar(s string) any {
	switch s[0] {
	case '~', 'n', 'N':
		if s == "~" || s == "null" || s == "Null" || s == "NULL" {
			return nil
		}
		return s
	case 't', 'T':
		if s == "true" || s == "True" || s == "TRUE" {
			return true
		}
		return s
	case 'f', 'F':
		if s == "false" || s == "False" || s == "FALSE" {
			return false
		}
		return s
	case 'y', 'Y', 'o', 'O':
		return s
	case '+', '-', '.', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		digits := s
		if digits[0] == '-' {
			digits = digits[1:]
		}
		if len(digits) > 0 && len(digits) < 19 && (digits[0] != '0' || digits == "0") && allDigits(digits) {
			n, _ := strconv.ParseInt(s, 10, 64)
			return n
		}
		// Floats, octals, timestamps and the like: yaml.v3 says. s is one plain scalar, so
		// decoding it as a plain scalar node is what reading it as a document does, without
		// the parser's buffers (a 5 KB allocation per call, for "100m" or "1.31.0").
		if v, ok := p.resolved[s]; ok {
			return v
		}
		var v any
		if err := (&yaml.Node{Kind: yaml.ScalarNode, Value: s}).Decode(&v); err != nil {
			p.failed = true
			return nil
		}
		v = JSONValue(v)
		if p.resolved == nil {
			p.resolved = map[string]any{}
		}
		p.resolved[s] = v
		return v
	}
	return s
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// quoted reads a one-line quoted scalar at the start of s: its value and length.
func quoted(s string) (string, int, bool) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case q == '\'' && c == '\'':
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String(), i + 1, true
		case q == '"' && c == '"':
			return b.String(), i + 1, true
		case q == '"' && c == '\\':
			if i+1 >= len(s) {
				return "", 0, false
			}
			i++
			switch s[i] {
			case '"', '\\', '/':
				b.WriteByte(s[i])
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			default:
				return "", 0, false
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false // goes on over more lines: not read here
}

// flow reads a one-line flow list of scalars, or an empty flow mapping.
func (p *parser) flow(s string) (any, bool) {
	s = strings.TrimRight(s, " ")
	if i := strings.Index(s, " #"); i >= 0 {
		s = strings.TrimRight(s[:i], " ")
	}
	if len(s) < 2 {
		return nil, false
	}
	if s[0] == '{' {
		if strings.TrimSpace(s[1:len(s)-1]) == "" && s[len(s)-1] == '}' {
			return map[string]any{}, true
		}
		return nil, false
	}
	if s[len(s)-1] != ']' {
		return nil, false
	}
	body := strings.TrimSpace(s[1 : len(s)-1])
	out := []any{}
	for body != "" {
		var v any
		if body[0] == '"' || body[0] == '\'' {
			str, n, ok := quoted(body)
			if !ok {
				return nil, false
			}
			v, body = str, strings.TrimLeft(body[n:], " ")
		} else {
			i := strings.IndexByte(body, ',')
			item := body
			if i >= 0 {
				item = body[:i]
			}
			item = strings.TrimSpace(item)
			if item == "" || strings.ContainsAny(item, "[]{}:#") || !plainStart(item) {
				return nil, false
			}
			v = p.scalar(item)
			if i >= 0 {
				body = body[i:]
			} else {
				body = ""
			}
		}
		out = append(out, v)
		if body == "" {
			break
		}
		if body[0] != ',' {
			return nil, false
		}
		body = strings.TrimLeft(body[1:], " ")
		if body == "" {
			return nil, false // a trailing comma
		}
	}
	return out, !p.failed
}

// literal reads a block scalar (|, with its chomping and indentation indicators) held by
// a collection at indentation ind.
func (p *parser) literal(header string, ind int) any {
	chomp, explicit, ok := blockHeader(header)
	if !ok {
		p.failed = true
		return nil
	}
	p.pos++
	content := -1
	if explicit > 0 {
		content = ind + explicit
	}
	// Two passes over the block's lines: the first finds where it ends and the size of its
	// value, the second writes the value into a string of exactly that size. (Collecting
	// the lines and joining them cost three times the value: the injector ConfigMap's
	// templates are one 95 KB literal.)
	first := p.pos
	var lines, end, size int // lines in the block; of them, up to the last non-empty one; their bytes
	leading := 0             // the most spaces of the empty lines before the first content line
	for ; p.pos < len(p.lines); p.pos++ {
		l := p.lines[p.pos]
		n := 0
		for n < len(l) && l[n] == ' ' {
			n++
		}
		if n == len(l) {
			switch {
			case content < 0:
				leading = max(leading, n)
			case n > content:
				lines++
				end, size = lines, size+n-content
				continue
			}
			lines++
			continue
		}
		if l[n] == '\t' && (content < 0 || n < content) {
			p.failed = true
			return nil
		}
		if content < 0 {
			if n <= ind {
				break
			}
			if n < leading {
				p.failed = true
				return nil
			}
			content = n
		}
		if n < content {
			break
		}
		lines++
		end, size = lines, size+len(l)-content
	}
	if p.unterminated && p.pos == len(p.lines) {
		// A block scalar that ends the input without a line break keeps none ("a: |\n x"
		// is "x"), and what keep chomping makes of its trailing lines then is yaml.v3's to say.
		p.failed = true
		return nil
	}
	// Trailing empty lines are the chomping's.
	trailing := lines - end
	if end == 0 {
		if chomp == '+' || leading > 0 && content >= 0 {
			p.failed = true
			return nil
		}
		return ""
	}
	return blockValue(p.lines[first:first+end], content, size, chomp, trailing)
}

// blockHeader reads a block scalar's header ("|", "|-", "|+2 # c", ...): its chomping and
// explicit indentation; false for anything else.
func blockHeader(header string) (chomp byte, explicit int, ok bool) {
	h := header[1:]
	if i := strings.Index(h, " #"); i >= 0 {
		h = h[:i]
	}
	h = strings.TrimRight(h, " ")
	for _, c := range []byte(h) {
		switch {
		case (c == '-' || c == '+') && chomp == 0:
			chomp = c
		case c >= '1' && c <= '9' && explicit == 0:
			explicit = int(c - '0')
		default:
			return 0, 0, false
		}
	}
	return chomp, explicit, true
}

// blockValue writes a block literal's value, of its lines up to the last non-empty one, into
// one string of exactly its size: size bytes of content, the breaks between the lines, and
// what chomping keeps of the trailing ones. The lines before the first content line are
// empty (no longer than content), the others are read from the content's indentation.
func blockValue(lines []string, content, size int, chomp byte, trailing int) string {
	size += len(lines) - 1
	switch chomp {
	case '+':
		size += 1 + trailing
	case 0:
		size++
	}
	var b strings.Builder
	b.Grow(size)
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if len(l) > content {
			b.WriteString(l[content:])
		}
	}
	switch chomp {
	case '+':
		b.WriteString(strings.Repeat("\n", 1+trailing))
	case 0:
		b.WriteByte('\n')
	}
	return b.String()
}

// JSONValue converts what the YAML decoder gives into the types JSON decoding gives and
// the Kubernetes libraries expect: int64 and float64 numbers, string-keyed maps.
func JSONValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = JSONValue(x)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = JSONValue(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = JSONValue(x)
		}
		return t
	case int:
		return int64(t)
	case uint64:
		return int64(t)
	case float32:
		return float64(t)
	}
	return v
}
