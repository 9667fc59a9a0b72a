package printer

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/fatih/color"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
)

// fleetRun is two clusters' demo runs interleaved, a link each, and the fleet's done.
func fleetRun(failed bool) []event.Event {
	one, two := demoRun(), demoRun()
	var evs []event.Event
	for i := range one {
		one[i].Cluster, two[i].Cluster = "cluster-1", "cluster-2"
		evs = append(evs, one[i], two[i])
	}
	out := event.FleetOutcome{
		Clusters: []event.FleetCluster{{Cluster: "cluster-1", Role: "primary", Outcome: "installed", Seconds: 4.21}, {Cluster: "cluster-2", Role: "primary", Outcome: "installed", Seconds: 3.9}},
		Links: []event.FleetLink{{Into: "cluster-1", From: "cluster-2", Secret: "istio-system/istio-remote-secret-cluster-2", Outcome: "created"},
			{Into: "cluster-2", From: "cluster-1", Secret: "istio-system/istio-remote-secret-cluster-1", Outcome: "unchanged"}},
	}
	evs = append(evs,
		event.Event{Type: event.Link, Cluster: "cluster-1", Object: "Secret/istio-system/istio-remote-secret-cluster-2", Message: "cluster-1 reads cluster-2 with it", LinkChange: event.LinkChange{LinkOutcome: event.LinkCreated}},
		event.Event{Type: event.Link, Cluster: "cluster-2", Object: "Secret/istio-system/istio-remote-secret-cluster-1", Message: "cluster-2 reads cluster-1 with it", LinkChange: event.LinkChange{LinkOutcome: event.LinkUnchanged}})
	done := event.Event{Type: event.Done, Message: "2 clusters, 2 links", RunEnd: event.RunEnd{Operation: "install", Fleet: &out}}
	if failed {
		out.Links[1].Outcome, out.Links[1].Error = "left-out", "needs cluster cluster-1, which did not converge"
		done.Error, done.Message = "the fleet did not converge", ""
	}
	return append(evs, done)
}

// The plain view of a fleet run is each cluster's plain lines with its prefix, the link
// lines, then the table and the verdict.
func TestFleetEventsText(t *testing.T) {
	for _, failed := range []bool{false, true} {
		var buf bytes.Buffer
		sink := NewFleetEvents(&buf, Text, false, TerminalOptions{})
		for _, e := range fleetRun(failed) {
			sink.Emit(e)
		}
		golden.Check(t, fmt.Sprintf("../../testdata/printer/fleet-install-failed-%v.txt", failed), buf.Bytes())
	}
}

// On a terminal: one live line per cluster in progress, cut to the width, no object line;
// at the end no live line is left.
func TestFleetEventsLive(t *testing.T) {
	for _, width := range []int{80, 200} {
		scr := newScreen(width)
		sink := NewFleetEvents(scr, Text, true, TerminalOptions{Size: func() (int, int) { return scr.width, 24 }}).(*fleetSink)
		evs := fleetRun(false)
		half := len(evs) / 2
		for _, e := range evs[:half] {
			sink.Emit(e)
		}
		live := scr.text()
		tail := live[len(live)-2:]
		for i, c := range []string{"cluster-1: ", "cluster-2: "} {
			if !strings.Contains(tail[i], c) || !strings.Contains(tail[i], "ready") {
				t.Errorf("at %d columns, live line %d is %q, want %s's progress", width, i, tail[i], c)
			}
		}
		for _, l := range live {
			if displayWidth(l) > width-1 {
				t.Errorf("wider than %d columns: %q", width, l)
			}
			if strings.Contains(l, "Deployment/istio-system/istiod created") {
				t.Errorf("an object line on the terminal: %q", l)
			}
		}
		for _, e := range evs[half:] {
			sink.Emit(e)
		}
		got := strings.Join(scr.text(), "\n")
		if strings.Contains(got, "⠋") || !strings.Contains(got, "Fleet install complete (2 clusters, 2 links)") || !strings.Contains(got, "[cluster-2] ✔ Installation complete") {
			t.Errorf("at %d columns the screen ends with:\n%s", width, got)
		}
	}
}

// The plan before the question: each cluster's summary and what comes after it (its
// notes), then the links.
func TestFleetPlan(t *testing.T) {
	var buf bytes.Buffer
	FleetPlan(&buf, []FleetPlanCluster{{Name: "cluster-1", Role: "primary", Error: "cannot reach it through context cluster-1"}, {Name: "cluster-3", Role: "remote", Nothing: "Nothing to remove."},
		{Name: "edge", Role: "remote", Notes: []string{"remotePilotAddress: the load balancer address west's east-west gateway gets, once it has one"}}},
		[]FleetPlanLink{{Into: "cluster-1", From: "cluster-3", Secret: "istio-system/istio-remote-secret-cluster-3", Action: "create"},
			{Into: "cluster-2", From: "cluster-1", Secret: "istio-system/istio-remote-secret-cluster-1", Action: "check"},
			{Into: "cluster-2", From: "cluster-9", Secret: "istio-system/istio-remote-secret-cluster-9", Action: "remove"}})
	golden.Check(t, "../../testdata/printer/fleet-plan.txt", buf.Bytes())
}

// What a fleet run keeps comes after the links, each with its reason and what to do.
func TestFleetPlanKept(t *testing.T) {
	color.NoColor = true
	var buf bytes.Buffer
	FleetPlan(&buf, nil, nil, FleetPlanKept{Cluster: "cluster-2", Reason: event.KeptSameCluster, Message: "context cluster-2-alias is cluster-2"},
		FleetPlanKept{Cluster: "cluster-9", Object: "Secret/istio-system/by-hand", Reason: event.KeptNotALink})
	want := "Kept:\n  ! its links in cluster-2: the context its link names is not the fleet file's, but the cluster is (the same kube-system UID)\n" +
		"    context cluster-2-alias is cluster-2\n" +
		"  ! Secret/istio-system/by-hand in cluster-9: it carries the fleet's label but is no link Secret istioctl wrote (the istio/multiCluster label and an apply by istioctl-remote-secret)\n"
	if buf.String() != want {
		t.Errorf("%q\nwant\n%q", buf.String(), want)
	}
}
