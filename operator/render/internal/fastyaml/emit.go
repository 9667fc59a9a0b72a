package fastyaml

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	yamlv2 "go.yaml.in/yaml/v2"
)

// Marshal prints an object exactly as yamlv2.Marshal does (the text sigs.k8s.io/yaml's
// Marshal gives), several times faster: yaml.v2's emitter handles every byte through
// a chain of calls, which made printing the largest single cost of a render (the injector
// ConfigMap is one 100 KB string). It is hand-written because no library prints this
// style faster; it keeps to what it can print exactly (string-keyed maps, lists, strings
// of printable ASCII and newlines, JSON's numbers, booleans, null) and hands any object
// holding anything else to yaml.v2 whole, so its output never differs (the comparison
// checks of fastyamltest.Emit run odd and fuzzed strings here and every profile's objects in
// operator/render through both).
func Marshal(obj map[string]any) ([]byte, error) {
	if b, ok := Emit(obj); ok {
		return b, nil
	}
	return yamlv2.Marshal(obj)
}

// Emit is Marshal's own printer; false when obj holds what only yaml.v2 prints exactly.
func Emit(obj map[string]any) ([]byte, bool) {
	// Sized once: growing a buffer per object allocated several times what a render prints.
	n := sizeHint(obj, 0)
	e := emitter{buf: make([]byte, 0, n+n/8+64), whitespace: true, indention: true}
	if !e.node(obj, -1, ctxRoot) {
		return nil, false
	}
	e.writeIndent(0) // the document's end
	return e.buf, true
}

// sizeHint estimates the printed size of v at nesting depth.
func sizeHint(v any, depth int) int {
	switch t := v.(type) {
	case map[string]any:
		n := 2
		for k, x := range t {
			n += 2*depth + len(k) + 3 + sizeHint(x, depth+1)
		}
		return n
	case []any:
		n := 2
		for _, x := range t {
			n += 2*depth + 3 + sizeHint(x, depth+1)
		}
		return n
	case string:
		return len(t) + 3 + strings.Count(t, "\n")*(2*depth+2)
	}
	return 8
}

type context int

const (
	ctxRoot context = iota
	ctxMapValue
	ctxSeqItem
)

// bestWidth is yaml.v2's line width: plain and quoted scalars fold at a space past it.
const bestWidth = 80

// emitter mirrors the state of yaml.v2's emitter that decides its output: the column, and
// whether the last thing written was white space or indentation.
type emitter struct {
	buf        []byte
	column     int
	whitespace bool
	indention  bool
}

// v2Quotes holds, for the number-like strings asked about, whether yaml.v2 quotes them (they
// read as another type), for the whole process: a render prints the same few ("1.31.0",
// ports) in many objects, on several goroutines, and asking costs a 5 KB encoder.
var v2Quotes sync.Map // string -> bool

func (e *emitter) putBreak() {
	e.buf = append(e.buf, '\n')
	e.column = 0
}

func (e *emitter) writeIndent(indent int) {
	if indent < 0 {
		indent = 0
	}
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.putBreak()
	}
	for e.column < indent {
		e.buf = append(e.buf, ' ')
		e.column++
	}
	e.whitespace, e.indention = true, true
}

func (e *emitter) writeIndicator(ind string, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !e.whitespace {
		e.buf = append(e.buf, ' ')
		e.column++
	}
	e.buf = append(e.buf, ind...)
	e.column += len(ind)
	e.whitespace = isWhitespace
	e.indention = e.indention && isIndention
}

// node prints v, held by a container whose indentation is indent; false: v holds
// something only yaml.v2 prints exactly.
func (e *emitter) node(v any, indent int, ctx context) bool {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			e.writeIndicator("{", true, true, false)
			e.writeIndicator("}", false, false, false)
			return true
		}
		in := 0
		if indent >= 0 {
			in = indent + 2
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, keyCompare)
		for _, k := range keys {
			e.writeIndent(in)
			if !e.key(k) {
				return false
			}
			e.writeIndicator(":", false, false, false)
			if !e.node(t[k], in, ctxMapValue) {
				return false
			}
		}
		return true
	case []any:
		if len(t) == 0 {
			e.writeIndicator("[", true, true, false)
			e.writeIndicator("]", false, false, false)
			return true
		}
		in := indent + 2
		if indent < 0 {
			in = 0
		} else if ctx == ctxMapValue && !e.indention {
			in = indent // yaml.v2 does not indent a list under a key
		}
		for _, x := range t {
			e.writeIndent(in)
			e.writeIndicator("-", true, false, true)
			if !e.node(x, in, ctxSeqItem) {
				return false
			}
		}
		return true
	case string:
		return e.str(t, indent+2)
	case nil:
		e.plain("null")
	case bool:
		e.plain(strconv.FormatBool(t))
	case int64:
		e.plain(strconv.FormatInt(t, 10))
	case int:
		e.plain(strconv.Itoa(t))
	case int32:
		e.plain(strconv.FormatInt(int64(t), 10))
	case float64:
		e.plain(formatFloat(t, 64))
	case float32:
		e.plain(formatFloat(float64(t), 32))
	default:
		return false
	}
	return true
}

func formatFloat(f float64, bits int) string {
	switch {
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	case math.IsNaN(f):
		return ".nan"
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// plain writes a scalar that needs no analysis (a number, a boolean, null).
func (e *emitter) plain(s string) {
	if !e.whitespace {
		e.buf = append(e.buf, ' ')
		e.column++
	}
	e.buf = append(e.buf, s...)
	e.column += len(s)
	e.whitespace, e.indention = false, false
}

// key writes a mapping key: yaml.v2 writes one of up to 128 characters on one line as a
// simple key, never folded.
func (e *emitter) key(k string) bool {
	if len(k) > 128 || !printable(k) {
		return false
	}
	a := analyze(k)
	if a.lineBreaks {
		return false
	}
	switch {
	case !e.readsAsString(k):
		e.doubleQuoted(k, -1)
	case !a.blockPlain || k == "":
		e.singleQuoted(k, -1)
	default:
		e.plainScalar(k, -1)
	}
	return true
}

// str writes a string value, its continuation lines indented by indent.
func (e *emitter) str(s string, indent int) bool {
	if !printable(s) {
		return false
	}
	a := analyze(s)
	switch {
	case a.lineBreaks:
		if !a.block {
			e.doubleQuoted(s, indent)
			return true
		}
		return e.literal(s, indent)
	case !e.readsAsString(s):
		e.doubleQuoted(s, indent)
	case !a.blockPlain:
		e.singleQuoted(s, indent)
	default:
		e.plainScalar(s, indent)
	}
	return true
}

// printable: only printable ASCII and newlines, the bytes whose handling is copied here.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 || c > 0x7e) && c != '\n' {
			return false
		}
	}
	return true
}

// readsAsString says whether s, unquoted, reads back as a string (yaml.v2's resolve): it
// does unless its first character can start a boolean, null, number or timestamp.
func (e *emitter) readsAsString(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c == '+' || c == '-' || c == '.' || c >= '0' && c <= '9':
		if !numberLike(s) {
			return true
		}
		// Numbers, timestamps, base-60 floats: yaml.v2 decides (once per string and process).
		if q, ok := v2Quotes.Load(s); ok {
			return !q.(bool)
		}
		out, err := yamlv2.Marshal(s)
		q := err != nil || len(out) > 0 && out[0] == '"'
		v2Quotes.Store(s, q)
		return !q
	case c == '~' || c == 'y' || c == 'Y' || c == 'n' || c == 'N' || c == 't' || c == 'T' || c == 'f' || c == 'F' || c == 'o' || c == 'O':
		switch s {
		case "~", "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
			"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "null", "Null", "NULL":
			return false
		}
	}
	return true
}

// numberLike: s has only characters a number, timestamp or base-60 float of yaml.v2's can
// hold (digits, signs, points, underscores, colons, exponents, the 0x/0o/0b prefixes, hex
// digits, the timestamp's T, Z and space, .inf and .nan); any other makes it a string.
func numberLike(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		case strings.IndexByte("+-._: xXoOtTzZiInN", c) >= 0: // and .inf, .nan
		default:
			return false
		}
	}
	return true
}

// analysis is what yaml.v2's emitter learns from a scalar to choose its style.
type analysis struct {
	lineBreaks bool
	blockPlain bool // plain allowed outside flow collections
	block      bool // literal allowed
}

func analyze(s string) analysis {
	if s == "" {
		return analysis{blockPlain: true}
	}
	var indicators, lineBreaks, leadingSpace, leadingBreak, trailingSpace, trailingBreak, spaceBreak bool
	if len(s) >= 3 && (s[:3] == "---" || s[:3] == "...") {
		indicators = true
	}
	followed := len(s) == 1 || s[1] == ' ' || s[1] == '\t'
	switch s[0] {
	case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		indicators = true
	case '?', ':', '-':
		if followed {
			indicators = true
		}
	}
	preceded, prevSpace := true, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !analyzed[c] {
			// The bytes that change nothing but what precedes the next one.
			j := i + 1
			for j < len(s) && !analyzed[s[j]] {
				j++
			}
			preceded, prevSpace = false, false
			i = j - 1
			continue
		}
		switch c {
		case ':':
			if i > 0 && (i+1 >= len(s) || s[i+1] == ' ' || s[i+1] == '\t') {
				indicators = true
			}
			prevSpace = false
		case '#':
			if i > 0 && preceded {
				indicators = true
			}
			prevSpace = false
		case ' ':
			if i == 0 {
				leadingSpace = true
			}
			if i == len(s)-1 {
				trailingSpace = true
			}
			prevSpace = true
		case '\n':
			lineBreaks = true
			if i == 0 {
				leadingBreak = true
			}
			if i == len(s)-1 {
				trailingBreak = true
			}
			if prevSpace {
				spaceBreak = true
			}
			prevSpace = false
		}
		preceded = c == ' ' || c == '\n'
	}
	a := analysis{lineBreaks: lineBreaks, blockPlain: true, block: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak || lineBreaks || indicators {
		a.blockPlain = false
	}
	if trailingSpace || spaceBreak {
		a.block = false
	}
	return a
}

// analyzed are the bytes analyze looks at after the first.
var analyzed = [256]bool{':': true, '#': true, ' ': true, '\n': true}

// The scalar writers below follow yaml.v2's, byte for byte, for the strings printable
// lets through. fold is the indentation of continuation lines, or -1 where yaml.v2 never
// folds (keys).

func (e *emitter) plainScalar(s string, fold int) {
	if !e.whitespace {
		e.buf = append(e.buf, ' ')
		e.column++
	}
	spaces := false
	for i := 0; i < len(s); {
		if s[i] == ' ' {
			if fold >= 0 && !spaces && e.column > bestWidth && !(i+1 < len(s) && s[i+1] == ' ') {
				e.writeIndent(fold)
			} else {
				e.buf = append(e.buf, ' ')
				e.column++
			}
			i++
			spaces = true
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' {
			j++
		}
		e.buf = append(e.buf, s[i:j]...)
		e.column += j - i
		e.indention, spaces = false, false
		i = j
	}
	e.whitespace, e.indention = false, false
}

func (e *emitter) singleQuoted(s string, fold int) {
	e.writeIndicator("'", true, false, false)
	spaces := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ':
			if fold >= 0 && !spaces && e.column > bestWidth && i > 0 && i < len(s)-1 && s[i+1] != ' ' {
				e.writeIndent(fold)
			} else {
				e.buf = append(e.buf, ' ')
				e.column++
			}
			spaces = true
		default:
			if c == '\'' {
				e.buf = append(e.buf, '\'')
				e.column++
			}
			e.buf = append(e.buf, c)
			e.column++
			e.indention, spaces = false, false
		}
	}
	e.writeIndicator("'", false, false, false)
	e.whitespace, e.indention = false, false
}

func (e *emitter) doubleQuoted(s string, fold int) {
	e.writeIndicator(`"`, true, false, false)
	spaces := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '\n':
			esc := c
			if c == '\n' {
				esc = 'n'
			}
			e.buf = append(e.buf, '\\', esc)
			e.column += 2
			spaces = false
		case ' ':
			if fold >= 0 && !spaces && e.column > bestWidth && i > 0 && i < len(s)-1 {
				e.writeIndent(fold)
				if s[i+1] == ' ' {
					e.buf = append(e.buf, '\\')
					e.column++
				}
			} else {
				e.buf = append(e.buf, ' ')
				e.column++
			}
			spaces = true
		default:
			j := i + 1
			for j < len(s) && s[j] != '"' && s[j] != '\\' && s[j] != '\n' && s[j] != ' ' {
				j++
			}
			e.buf = append(e.buf, s[i:j]...)
			e.column += j - i
			spaces = false
			i = j - 1
		}
	}
	e.writeIndicator(`"`, false, false, false)
	e.whitespace, e.indention = false, false
}

// literal writes s as a block scalar (|); false for the "keep" chomping (two or more
// trailing newlines), which ends yaml.v2's document otherwise.
func (e *emitter) literal(s string, indent int) bool {
	n := len(s)
	if s == "\n" || n >= 2 && s[n-1] == '\n' && s[n-2] == '\n' {
		return false
	}
	e.writeIndicator("|", true, false, false)
	if s[0] == ' ' || s[0] == '\n' {
		e.writeIndicator("2", false, false, false)
	}
	if s[n-1] != '\n' {
		e.writeIndicator("-", false, false, false)
	}
	e.putBreak()
	e.indention, e.whitespace = true, true
	for i := 0; i < n; {
		if s[i] == '\n' {
			e.buf = append(e.buf, '\n')
			e.column = 0
			e.indention = true
			i++
			continue
		}
		j := i
		for j < n && s[j] != '\n' {
			j++
		}
		e.writeIndent(indent)
		e.buf = append(e.buf, s[i:j]...)
		e.column += j - i
		e.indention = false
		i = j
	}
	return true
}

// keyCompare orders keys as yaml.v2 does: runs of digits by their number, letters before
// other characters.
func keyCompare(a, b string) int {
	if keyLess(a, b) {
		return -1
	}
	if keyLess(b, a) {
		return 1
	}
	return 0
}

func keyLess(a, b string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		al, bl := isLetter(a[i]), isLetter(b[i])
		if al && bl {
			return a[i] < b[i]
		}
		if al || bl {
			return bl
		}
		var ai, bi int
		var an, bn int64
		if a[i] == '0' || b[i] == '0' {
			for j := i - 1; j >= 0 && isDigit(a[j]); j-- {
				if a[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		for ai = i; ai < len(a) && isDigit(a[ai]); ai++ {
			an = an*10 + int64(a[ai]-'0')
		}
		for bi = i; bi < len(b) && isDigit(b[bi]); bi++ {
			bn = bn*10 + int64(b[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return a[i] < b[i]
	}
	return len(a) < len(b)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
