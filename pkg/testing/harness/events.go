package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Events decodes an -o json stream, one event a line, into E (event.Event, or a struct of
// the fields a test reads), failing the test on a line that is not one.
func Events[E any](t testing.TB, stream string) []E {
	t.Helper()
	evs, err := ParseEvents[E](stream)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// ParseEvents is Events with an error.
func ParseEvents[E any](stream string) ([]E, error) {
	var out []E
	sc := bufio.NewScanner(strings.NewReader(stream))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e E
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("not an event: %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}
