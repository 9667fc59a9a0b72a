package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// Segment is one step of a path: a map key, a list index, or a list selector
// ([key:value] picks the item whose key equals value; [:value] a scalar item; in an
// overlay path [value] too).
type Segment struct {
	Key      string
	Index    int
	SelKey   string
	SelValue string
	kind     segKind
	// bare says a selector was written [value] (overlay paths only).
	bare bool
}

type segKind int

const (
	segKey segKind = iota
	segIndex
	segSelect
)

// SegmentKind says what a segment selects.
type SegmentKind int

// The kinds of segment.
const (
	SegmentKey SegmentKind = iota
	SegmentIndex
	SegmentSelector
)

// Kind says whether s is a key, an index or a selector.
func (s Segment) Kind() SegmentKind {
	switch s.kind {
	case segIndex:
		return SegmentIndex
	case segSelect:
		return SegmentSelector
	}
	return SegmentKey
}

// Matches says whether list item number i (with value item) is the one s selects.
func (s Segment) Matches(item any, i int) bool {
	switch s.kind {
	case segIndex:
		return s.Index == i
	case segSelect:
		if s.SelKey == "" {
			return fmt.Sprint(item) == s.SelValue
		}
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		v, ok := m[s.SelKey]
		return ok && fmt.Sprint(v) == s.SelValue
	}
	return false
}

func (s Segment) String() string {
	switch s.kind {
	case segIndex:
		return fmt.Sprintf("[%d]", s.Index)
	case segSelect:
		if s.bare {
			return "[" + s.SelValue + "]"
		}
		return fmt.Sprintf("[%s:%s]", s.SelKey, s.SelValue)
	}
	return strings.ReplaceAll(s.Key, ".", `\.`)
}

// ScalarPattern is what a selector compares a scalar list item with, as upstream's
// overlays do: [value] and [:value] the value, [key:value] the whole "key:value".
func (s Segment) ScalarPattern() string {
	if s.SelKey == "" {
		return s.SelValue
	}
	return s.SelKey + ":" + s.SelValue
}

// Path is a parsed path such as components.ingressGateways[name:istio-ingressgateway].enabled.
type Path []Segment

func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		if i > 0 && s.kind == segKey {
			b.WriteByte('.')
		}
		b.WriteString(s.String())
	}
	return b.String()
}

// ParsePath parses the --set path grammar: keys separated by dots (\. escapes a dot in a
// key), [N] list indexes and [key:value] selectors, either directly after a key (a[0]) or
// as their own dotted step (a.[0]).
func ParsePath(s string) (Path, error) { return parsePath(s, false) }

// ParseOverlayPath parses the path of a k8s overlay patch: the --set grammar, plus what
// upstream's overlays accept besides: [value] selects the scalar list item equal to value
// (args.[30m]), and [-1] is the end of a list (to append to).
func ParseOverlayPath(s string) (Path, error) { return parsePath(s, true) }

func parsePath(s string, overlay bool) (Path, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty path")
	}
	var out Path
	var key strings.Builder
	flushKey := func() {
		if key.Len() > 0 {
			out = append(out, Segment{Key: key.String(), kind: segKey})
			key.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && s[i+1] == '.':
			key.WriteByte('.')
			i++
		case c == '.':
			afterBracket := key.Len() == 0 && i > 0 && s[i-1] == ']'
			if i == len(s)-1 || (key.Len() == 0 && !afterBracket) {
				return nil, fmt.Errorf("empty key at position %d of %q", i+1, s)
			}
			flushKey()
		case c == '[':
			flushKey()
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed [ at position %d of %q", i+1, s)
			}
			expr := s[i+1 : i+end]
			if overlay && unescapedDot(expr) {
				// upstream splits the path there and patches nothing, silently
				return nil, fmt.Errorf("a dot inside [%s] splits the path (upstream patches nothing then): write \\. for a dot, in %q", expr, s)
			}
			seg, err := parseBracket(expr, overlay)
			if err != nil {
				return nil, fmt.Errorf("%w in %q", err, s)
			}
			out = append(out, seg)
			i += end
			if i+1 < len(s) && s[i+1] != '.' && s[i+1] != '[' {
				return nil, fmt.Errorf("want . or [ after ] at position %d of %q", i+2, s)
			}
		case c == ']':
			return nil, fmt.Errorf("unexpected ] at position %d of %q", i+1, s)
		case c == ' ' || c == '\t':
			return nil, fmt.Errorf("space in path %q", s)
		default:
			key.WriteByte(c)
		}
	}
	flushKey()
	if len(out) == 0 {
		return nil, fmt.Errorf("empty path")
	}
	return out, nil
}

func unescapedDot(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' && (i == 0 || s[i-1] != '\\') {
			return true
		}
	}
	return false
}

func parseBracket(expr string, overlay bool) (Segment, error) {
	if overlay {
		// As upstream: \. is a dot; a number is an index (-1 the end), anything else a value.
		expr = strings.ReplaceAll(expr, `\.`, ".")
		if n, err := strconv.Atoi(expr); err == nil && n >= -1 {
			return Segment{Index: n, kind: segIndex}, nil
		}
		if !strings.Contains(expr, ":") {
			if expr == "" {
				return Segment{}, fmt.Errorf("empty selector []")
			}
			return Segment{SelValue: expr, kind: segSelect, bare: true}, nil
		}
	}
	if k, v, ok := strings.Cut(expr, ":"); ok {
		if v == "" {
			return Segment{}, fmt.Errorf("selector [%s] has no value", expr)
		}
		return Segment{SelKey: k, SelValue: v, kind: segSelect}, nil
	}
	n, err := strconv.Atoi(expr)
	if err != nil || n < 0 {
		return Segment{}, fmt.Errorf("[%s] is neither an index [N] nor a selector [key:value]", expr)
	}
	return Segment{Index: n, kind: segIndex}, nil
}
