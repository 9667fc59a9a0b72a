package cmd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// recordedRuns are the single-cluster runs whose -o json streams testdata/events holds,
// in the order they were recorded (from an empty cluster): each starts from what the one
// before left.
var recordedRuns = []struct {
	name string
	args []string
	// fails says the command fails (exit 1).
	fails bool
}{
	{"install", []string{"install", "-y", "--set", "profile=minimal"}, false},
	{"install-unchanged", []string{"install", "-y", "--set", "profile=minimal"}, false},
	{"install-dry-run", []string{"install", "--dry-run", "--set", "profile=minimal", "--set", "values.pilot.traceSampling=5"}, false},
	{"upgrade", []string{"install", "-y", "--set", "profile=minimal", "--set", "values.pilot.traceSampling=5"}, false},
	{"rollback-dry-run", []string{"rollback", "--dry-run"}, false},
	{"rollback", []string{"rollback", "-y"}, false},
	{"atomic-rollback", append([]string{"install", "-y", "--atomic", "--set", "profile=minimal"}, brokenIstiod...), true},
	{"uninstall-dry-run", []string{"uninstall", "-r", "default", "--dry-run"}, false},
	{"uninstall", []string{"uninstall", "-r", "default", "-y"}, false},
	{"atomic-uninstall", append([]string{"install", "-y", "--atomic", "--set", "profile=minimal"}, brokenIstiod...), true},
	{"uninstall-purge-dry-run", []string{"uninstall", "--purge", "--dry-run"}, false},
	{"uninstall-purge", []string{"uninstall", "--purge", "-y"}, false},
	{"uninstall-nothing", []string{"uninstall", "--purge", "-y"}, false},
	{"install-canary", []string{"install", "-y", "--set", "profile=minimal", "--set", "revision=canary"}, false},
	{"install-default-moves", []string{"install", "-y", "--set", "profile=minimal"}, false},
	{"uninstall-canary", []string{"uninstall", "-r", "canary", "-y"}, false},
	// A clean install of the default profile: pkg/printer's plain view of it is held short.
	{"uninstall-purge-again", []string{"uninstall", "--purge", "-y"}, false},
	{"install-default-profile", []string{"install", "-y"}, false},
}

// brokenIstiod makes istiod unschedulable: an install that fails within 6 seconds.
var brokenIstiod = []string{"--readiness-timeout", "6s", "--set", "components.pilot.k8s.nodeSelector.no-such-node=x"}

// TestRecordedStreamsE2E runs the recorded runs again and compares each -o json stream with
// its recording, line for line and byte for byte once what differs from run to run is
// masked (streamForm). The only lines allowed beyond a recording are the documented
// additions (docs/events.md): an uninstall's plan, which every uninstall that removes
// something now emits.
func TestRecordedStreamsE2E(t *testing.T) {
	// As recorded: from an empty cluster of its own (the namespaces istiod writes its root
	// certificate into, and a purge removes it from, are the cluster's own and no other test's).
	c := cluster.StartPrivate(t)
	t.Setenv("HOME", t.TempDir())
	for _, r := range recordedRuns {
		out, stderr, err := harness.Run(t, append([]string{"--kubeconfig", c.Kubeconfig}, append(r.args, "-o", "json")...)...)
		if (err != nil) != r.fails {
			t.Fatalf("%s: error %v, want one: %v\n%s\n%s", r.name, err, r.fails, out, stderr)
		}
		planCountsDone(t, r.name, out)
		want := recording(t, r.name, out)
		got := streamForm(t, out)
		if w := streamForm(t, string(want)); strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Errorf("%s: the stream differs from its recording:\n%s", r.name, firstDifference(w, got))
		}
	}
}

// recording is the recorded stream testdata/events/<name>.jsonl; -update records out as it.
// A recording changes only where the stream deliberately does (the reason goes in the commit).
func recording(t *testing.T, name, out string) []byte {
	t.Helper()
	path := filepath.Join("../../testdata/events", name+".jsonl")
	if golden.Updating() {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// The parts of a stream that differ from run to run: when things happened, the pods'
// random names, the scheduler's node counts, how long a cluster took.
var (
	streamTimes   = regexp.MustCompile(`"(time|since)":"[^"]*"`)
	streamSeconds = regexp.MustCompile(`"seconds":[0-9.]+`)
	// A record's time in a message (--atomic's "installed by istioctl 1.30.0 at ...").
	messageTimes = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
)

// streamForm is a stream as it is the same run after run: the varying parts masked,
// waiting and ready events dropped (they depend on how fast kwok reports pods), and the
// events of components that run at the same time (and of a fleet's clusters) grouped: per
// cluster, what comes before its first component event, then each component's events in
// component order, then the rest, each keeping its own order, then its links (made at once)
// in text order.
func streamForm(t *testing.T, stream string) []string {
	t.Helper()
	type line struct {
		text               string
		cluster, component string
		part               int
	}
	var lines []line
	started := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(stream), "\n") {
		if l == "" {
			continue
		}
		var e struct{ Type, Cluster, Component string }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("not a JSON event: %q: %v", l, err)
		}
		if e.Type == "waiting" || e.Type == "ready" {
			continue
		}
		l = streamTimes.ReplaceAllString(l, `"$1":"T"`)
		l = streamSeconds.ReplaceAllString(l, `"seconds":0`)
		l = messageTimes.ReplaceAllString(l, "<time>")
		l = podSuffix.ReplaceAllString(l, "-<pod>")
		l = nodeCounts.ReplaceAllString(l, "N/N${1}N$2")
		part := 0
		switch {
		case e.Type == "link":
			part = 3 // links are made at once: in text order
		case e.Component != "":
			part, started[e.Cluster] = 1, true
		case started[e.Cluster]:
			part = 2
		}
		if e.Cluster == "" && e.Type == "done" && strings.Contains(l, `"fleet":`) {
			e.Cluster = "~" // the fleet's own done: last
		}
		lines = append(lines, line{l, e.Cluster, e.Component, part})
	}
	sort.SliceStable(lines, func(i, j int) bool {
		a, b := lines[i], lines[j]
		if a.cluster != b.cluster {
			return a.cluster < b.cluster
		}
		if a.part != b.part {
			return a.part < b.part
		}
		switch a.part {
		case 1:
			return a.component < b.component
		case 3:
			return a.text < b.text
		}
		return false
	})
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	return out
}

// doneCounts is a run's closing message: "[record N: ]A applied, U unchanged, P pruned".
var doneCounts = regexp.MustCompile(`^(?:record \d+: )?(\d+) (?:would be )?applied, (\d+) unchanged, (\d+) (?:would be )?pruned$`)

// planCountsDone checks that a run which succeeds does what its plan event said, counted the
// same way: created and updated objects are what it applied (the default revision tag's
// objects included), then unchanged and pruned.
func planCountsDone(t *testing.T, name, stream string) {
	t.Helper()
	type counted struct {
		Type     string
		Message  string
		ExitCode *int
		Changes  *struct{ Create, Update, Unchanged, Prune int }
	}
	var plan, done *counted
	for _, l := range strings.Split(strings.TrimSpace(stream), "\n") {
		if l == "" {
			continue
		}
		var e counted
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%s: not a JSON event: %q: %v", name, l, err)
		}
		switch {
		case e.Type == "plan" && e.Changes != nil && plan == nil:
			plan = &e
		case e.Type == "done":
			done = &e
		}
	}
	if plan == nil || done == nil || done.ExitCode == nil || *done.ExitCode != 0 {
		return
	}
	m := doneCounts.FindStringSubmatch(done.Message)
	if m == nil {
		return // an uninstall's "N removed"
	}
	c := plan.Changes
	want := fmt.Sprintf("%d applied, %d unchanged, %d pruned", c.Create+c.Update, c.Unchanged, c.Prune)
	if got := m[1] + " applied, " + m[2] + " unchanged, " + m[3] + " pruned"; got != want {
		t.Errorf("%s: the plan said %+v (%s), the run did %q", name, *c, want, done.Message)
	}
}

// firstDifference names the first line where two streams differ.
func firstDifference(want, got []string) string {
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n want " + w + "\n  got " + g
		}
	}
	return ""
}
