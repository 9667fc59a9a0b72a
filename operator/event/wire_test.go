package event

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorded are the -o json streams of real runs (install, upgrade, dry runs, rollback,
// --atomic, uninstall, the cluster lock, Ctrl-C, fleet install and uninstall), recorded
// before the vocabulary was typed: pkg/cmd's TestRecordedStreamsE2E runs them again.
const recorded = "../../testdata/events"

// TestRecordedStreamsRoundTrip reads every event of the recorded streams into its typed
// fields and writes it again: byte for byte what the stream said.
func TestRecordedStreamsRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(recorded, "*.jsonl"))
	if err != nil || len(files) < 20 {
		t.Fatalf("recorded streams: %v (%d files)", err, len(files))
	}
	seen := map[string]bool{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var e Event
			if err := json.Unmarshal(line, &e); err != nil {
				t.Fatalf("%s:%d: %v", f, i+1, err)
			}
			got, err := json.Marshal(e)
			if err != nil {
				t.Fatalf("%s:%d: %v", f, i+1, err)
			}
			if !bytes.Equal(got, line) {
				t.Errorf("%s:%d:\n got %s\nwant %s", f, i+1, got, line)
			}
			seen[string(e.Type)+"/"+statusOf(line)] = true
		}
	}
	// The recordings hold every typed status of the stream.
	for _, want := range []string{"plan/dry-run", "done/dry-run", "done/rollback", "done/uninstall", "done/interrupted",
		"lock/waiting", "lock/acquired", "revision-tag/created", "revision-tag/moved", "link/created", "link/removed",
		"link/unchanged", "link/left-out", "applied/would be configured", "pruned/would be removed"} {
		if !seen[want] {
			t.Errorf("no recorded %s event", want)
		}
	}
}

func statusOf(line []byte) string {
	var w struct{ Status string }
	_ = json.Unmarshal(line, &w)
	return strings.SplitN(w.Status, " (", 2)[0]
}
