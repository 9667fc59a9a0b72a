package printer

import (
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// cells measures how many terminal columns a rune takes. East Asian ambiguous runes count
// as one, whatever the locale says: ✔ and ✘ are one column in the terminals we draw on.
var cells = func() *runewidth.Condition {
	c := runewidth.NewCondition()
	c.EastAsianWidth = false
	return c
}()

// displayWidth is the number of columns s takes on a terminal, escape sequences left out.
func displayWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			i = escapeEnd(s, i)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += cells.RuneWidth(r)
		i += size
	}
	return n
}

// cut shortens s to at most width columns, ending it with "…" when it had to, and keeps its
// escape sequences whole (a colour reset follows a cut coloured line).
func cut(s string, width int) string {
	if displayWidth(s) <= width {
		return s
	}
	if width < 1 {
		return ""
	}
	var b strings.Builder
	n, escaped := 0, false
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			j := escapeEnd(s, i)
			b.WriteString(s[i:j])
			escaped, i = true, j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		w := cells.RuneWidth(r)
		if n+w > width-1 {
			break
		}
		b.WriteRune(r)
		n, i = n+w, i+size
	}
	b.WriteString("…")
	if escaped {
		b.WriteString("\x1b[0m")
	}
	return b.String()
}

// escapeEnd is the index after the escape sequence that starts at s[i]: a CSI sequence
// (ESC [ parameters final-byte) or a two-byte escape.
func escapeEnd(s string, i int) int {
	if i+1 >= len(s) {
		return len(s)
	}
	if s[i+1] != '[' {
		return i + 2
	}
	for j := i + 2; j < len(s); j++ {
		if s[j] >= 0x40 && s[j] <= 0x7e {
			return j + 1
		}
	}
	return len(s)
}
