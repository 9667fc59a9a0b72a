package printer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fatih/color"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
)

// recorded reads a recorded -o json stream (testdata/events) back into events.
func recorded(t *testing.T, name string) []event.Event {
	t.Helper()
	f, err := os.Open(filepath.Join("../../testdata/events", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []event.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e event.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		evs = append(evs, e)
	}
	return evs
}

// The plain (non-TTY) view of recorded runs: what CI logs show, driven by the events'
// own times (no clock, no load), with and without -v.
func TestPlainFromRecordedStreams(t *testing.T) {
	color.NoColor = true
	for _, name := range []string{"install-default-profile", "install", "install-unchanged", "install-dry-run", "upgrade", "install-canary", "uninstall", "uninstall-purge", "atomic-rollback", "rollback", "lock-waiter"} {
		for _, verbose := range []bool{false, true} {
			var b bytes.Buffer
			sink := NewEvents(&b, Text, EventOptions{Objects: verbose})
			for _, e := range recorded(t, name) {
				sink.Emit(e)
			}
			suffix := ""
			if verbose {
				suffix = "-v"
			}
			golden.Check(t, filepath.Join("../../testdata/printer/plain", name+suffix+".txt"), b.Bytes())
			if lines := strings.Count(b.String(), "\n"); name == "install-default-profile" && !verbose && lines > 8 {
				t.Errorf("a clean default install prints %d lines without -v, want at most 8:\n%s", lines, b.String())
			}
		}
	}
}
