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

	"github.com/istioctl-installer/istioctl/operator/check"
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

// Precheck's plain report from recorded reports (`x precheck -o json` on the bed: a clean
// cluster, an installed one, one whose namespace refuses the pods): a line per passing
// section, each failing check in full with its object and cause.
func TestPlainPrecheckFromRecordedReports(t *testing.T) {
	color.NoColor = true
	for _, name := range []string{"clean", "installed", "admission-refused"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/printer/precheck", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var rep check.Report
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var out bytes.Buffer
		if err := Report(&out, &rep, Text, ReportOptions{Short: true}); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("../../testdata/printer/precheck", name+".txt"), out.Bytes())
		if lines := strings.Count(out.String(), "\n"); name == "clean" && lines > 15 {
			t.Errorf("a clean precheck prints %d lines, want at most 15:\n%s", lines, out.String())
		}
		failed := 0
		for _, r := range rep.Results {
			if r.Passed {
				continue
			}
			failed++
			if !strings.Contains(out.String(), r.Object+": "+r.Message) {
				t.Errorf("%s: the failing %s on %s is not printed in full:\n%s", name, r.Check, r.Object, out.String())
			}
		}
		if name == "admission-refused" && failed == 0 {
			t.Errorf("%s: the recorded report has no failure", name)
		}
		// JUnit: a case fails per failing result; a note passes, its text in the output.
		var x bytes.Buffer
		if err := Report(&x, &rep, JUnit); err != nil {
			t.Fatal(err)
		}
		failing, notes := 0, 0
		for _, r := range rep.Results {
			switch {
			case r.Failing():
				failing++
			case r.Note():
				notes++
				if !strings.Contains(x.String(), "<system-out>note: "+r.Message) {
					t.Errorf("%s: the note on %s is not in the JUnit output:\n%s", name, r.Object, x.String())
				}
			}
		}
		if got := strings.Count(x.String(), "<failure "); got != failing {
			t.Errorf("%s: JUnit has %d failures, the report %d failing results (and %d notes)", name, got, failing, notes)
		}
		if name == "clean" && notes == 0 {
			t.Errorf("%s: the recorded report has no note (the bed's Kubernetes is outside the window)", name)
		}
	}
}
