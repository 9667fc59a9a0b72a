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
		{event.Event{Type: event.Batch, Outcome: event.OutcomeSucceeded, Message: "batch 4/4: 5 workloads ready on revision b (5 restarted, 2.1s)"},
			"✔ batch 4/4: 5 workloads ready on revision b (5 restarted, 2.1s)\n"},
		{event.Event{Type: event.Batch, Outcome: event.OutcomeFailed, Message: "batch 3/4: 5 workloads, stopped", Error: "batch 3/4: Deployment/ns/w0: unschedulable"},
			"✘ batch 3/4: 5 workloads, stopped: batch 3/4: Deployment/ns/w0: unschedulable\n"},
		{event.Event{Type: event.Done, Operation: event.OperationUpgrade, Outcome: event.OutcomeSucceeded, Message: "revision a -> b: 2 batches, 5 workloads restarted"},
			"✔ Installation complete (revision a -> b: 2 batches, 5 workloads restarted)\n"},
		{event.Event{Type: event.Done, Operation: event.OperationRollback, Outcome: event.OutcomeSucceeded, Message: "revision a: 4 batches, 20 workloads restarted"},
			"✔ Rollback to revision a: 4 batches, 20 workloads restarted\n"},
		{event.Event{Type: event.Done, Operation: event.OperationUpgrade, Outcome: event.OutcomeInterrupted, Message: "revision a -> b: 1 batches, 5 workloads restarted"},
			"✘ Interrupted\n"},
	})
}
