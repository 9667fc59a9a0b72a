package cmd_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
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
}

// brokenIstiod makes istiod unschedulable: an install that fails within 6 seconds.
var brokenIstiod = []string{"--readiness-timeout", "6s", "--set", "components.pilot.k8s.nodeSelector.no-such-node=x"}

// TestRecordedStreamsE2E runs the recorded runs again and compares each -o json stream with
// its recording, line for line and byte for byte once what differs from run to run is
// masked (streamForm). The only lines allowed beyond a recording are the documented
// additions (docs/events.md): an uninstall's plan, which every uninstall that removes
// something now emits.
func TestRecordedStreamsE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	ist := istioctlOn(t, c)
	ist("uninstall", "--purge", "-y")
	// As recorded: from an empty cluster, the first install creating the istio namespace.
	namespaceGone(t, c, "istio-system")
	t.Cleanup(func() { _, _, _ = run(t, "--kubeconfig", c.Kubeconfig, "uninstall", "--purge", "-y") })
	for _, r := range recordedRuns {
		out, stderr, err := run(t, append([]string{"--kubeconfig", c.Kubeconfig}, append(r.args, "-o", "json")...)...)
		if (err != nil) != r.fails {
			t.Fatalf("%s: error %v, want one: %v\n%s\n%s", r.name, err, r.fails, out, stderr)
		}
		want, err := os.ReadFile(filepath.Join("../../testdata/events", r.name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		got, added := withoutAdditions(streamForm(t, out))
		if uninstalls := strings.Count(string(want), `"operation":"uninstall"`); added != uninstalls {
			t.Errorf("%s: %d uninstall plans, want one per uninstall (%d)", r.name, added, uninstalls)
		}
		if w := streamForm(t, string(want)); strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Errorf("%s: the stream differs from its recording:\n%s", r.name, firstDifference(w, got))
		}
	}
}

// namespaceGone deletes namespace name and waits until it is gone.
func namespaceGone(t *testing.T, c *cluster.Cluster, name string) {
	t.Helper()
	ctx := context.Background()
	if err := c.Kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		_, err := c.Kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespace %s is still there after 2 minutes: %v", name, err)
		}
	}
}

// uninstallPlan is the documented addition: an uninstall's plan (it counts removals).
var uninstallPlan = regexp.MustCompile(`^\{"time":"T","type":"plan",.*"changes":\{"create":0,"update":0,"unchanged":0,"prune":0,"remove":`)

// withoutAdditions drops the documented additions from a stream and counts them.
func withoutAdditions(lines []string) ([]string, int) {
	var out []string
	n := 0
	for _, l := range lines {
		if uninstallPlan.MatchString(l) {
			n++
			continue
		}
		out = append(out, l)
	}
	return out, n
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
