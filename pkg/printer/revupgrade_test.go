package printer

import (
	"testing"

	"github.com/istioctl-installer/istioctl/operator/event"
)

// The lines of upgrade --strategy revision, from the events operator/action's
// TestRevisionUpgradeE2E asserts: the plan (a resumed one says so) with its writes, a line
// per batch, and the last line of an upgrade, a rollback and an interrupted run.
func TestRevisionUpgradeText(t *testing.T) {
	checkText(t, []textCase{
		{event.Event{Type: event.Plan, Message: "revision a -> b: 15 workloads in 3 batches (resumed: 1 of 4 batches done)",
			Details: []string{"Namespace/ns: label istio.io/rev=a -> b (field manager istioctl-revision-upgrade)"}},
			"- revision a -> b: 15 workloads in 3 batches (resumed: 1 of 4 batches done)\n    Namespace/ns: label istio.io/rev=a -> b (field manager istioctl-revision-upgrade)\n"},
		{event.Event{Type: event.Batch, Message: "batch 4/4: 5 workloads ready on revision b (5 restarted, 2.1s)", BatchEnd: event.BatchEnd{BatchResult: event.RunSucceeded}},
			"✔ batch 4/4: 5 workloads ready on revision b (5 restarted, 2.1s)\n"},
		{event.Event{Type: event.Batch, Message: "batch 3/4: 5 workloads, stopped", Error: "batch 3/4: Deployment/ns/w0: unschedulable", BatchEnd: event.BatchEnd{BatchResult: event.RunFailed}},
			"✘ batch 3/4: 5 workloads, stopped: batch 3/4: Deployment/ns/w0: unschedulable\n"},
		{event.Event{Type: event.Done, Message: "revision a -> b: 2 batches, 5 workloads restarted", RunEnd: event.RunEnd{Operation: event.OperationUpgrade, Result: event.RunSucceeded}},
			"✔ Installation complete (revision a -> b: 2 batches, 5 workloads restarted)\n"},
		{event.Event{Type: event.Done, Message: "revision a: 4 batches, 20 workloads restarted", RunEnd: event.RunEnd{Operation: event.OperationRollback, Result: event.RunSucceeded}},
			"✔ Rollback to revision a: 4 batches, 20 workloads restarted\n"},
		{event.Event{Type: event.Done, Message: "revision a -> b: 1 batches, 5 workloads restarted", RunEnd: event.RunEnd{Operation: event.OperationUpgrade, Result: event.RunInterrupted}},
			"✘ Interrupted\n"},
	})
}
