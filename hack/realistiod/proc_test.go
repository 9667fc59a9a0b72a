package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLastLines(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, log, want string
	}{
		{"short", "2026-12-05T04:14:13Z stderr F one\n2026-12-05T04:14:13Z stderr F two words\n", "  one\n  two words"},
		{"long", strings.Repeat("2026-12-05T04:14:13Z stderr F x\n", 3000) + "2026-12-05T04:14:13Z stderr F failed to start: bind\n",
			"  x\n  x\n  x\n  x\n  failed to start: bind"},
		{"missing", "", "  (no log: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if tc.log != "" {
				if err := os.WriteFile(path, []byte(tc.log), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := lastLines(path, 5); !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
