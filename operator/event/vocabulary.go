package event

import (
	"fmt"
	"slices"
)

// The closed sets of the stream (docs/events.md): each a type whose values are listed
// once here. An event carrying a value outside its set does not marshal, and a stream
// carrying one does not unmarshal: a new value is a new schemaVersion.

// Operation is the kind of run a done event ends.
type Operation string

// The operations.
const (
	OperationInstall Operation = "install"
	// OperationUpgrade: the revision already had a successful install.
	OperationUpgrade   Operation = "upgrade"
	OperationRollback  Operation = "rollback"
	OperationUninstall Operation = "uninstall"
)

var operations = []Operation{OperationInstall, OperationUpgrade, OperationRollback, OperationUninstall}

// Action is what happened to an object on an applied or pruned event.
type Action string

// The actions.
const (
	ActionCreated     Action = "created"
	ActionConfigured  Action = "configured"
	ActionUnchanged   Action = "unchanged"
	ActionDeactivated Action = "deactivated"
	// ActionPruned: an install's prune; ActionRemoved: an uninstall's removal.
	ActionPruned  Action = "pruned"
	ActionRemoved Action = "removed"
)

var actions = []Action{ActionCreated, ActionConfigured, ActionUnchanged, ActionDeactivated, ActionPruned, ActionRemoved}

// LockState is what a lock event says of the cluster lock.
type LockState string

// The lock states.
const (
	// LockWaiting: another writer holds it (Holder, Since).
	LockWaiting LockState = "waiting"
	// LockAcquired: the wait ended.
	LockAcquired LockState = "acquired"
	// LockTakenOver: an expired lock was taken over (Holder: the previous holder).
	LockTakenOver LockState = "taken-over"
	// LockLost: the run stops writing (Error says why).
	LockLost LockState = "lost"
)

var lockStates = []LockState{LockWaiting, LockAcquired, LockTakenOver, LockLost}

// Outcome is how something ended: a run (done), a fleet's cluster or link, the default
// revision tag. Each of those has its own closed set of outcomes (RunOutcomes, ...).
type Outcome string

// The outcomes.
const (
	// A run's (done): it did what it set out to do, failed (Error says why), or was
	// stopped by Ctrl-C at a safe point.
	OutcomeSucceeded   Outcome = "succeeded"
	OutcomeFailed      Outcome = "failed"
	OutcomeInterrupted Outcome = "interrupted"
	// A fleet cluster's: installed, unchanged (nothing written), removed, failed or skipped
	// (a cluster it needs failed).
	OutcomeInstalled Outcome = "installed"
	OutcomeUnchanged Outcome = "unchanged"
	OutcomeRemoved   Outcome = "removed"
	OutcomeSkipped   Outcome = "skipped"
	// A link's besides: created, rotated (its token replaced), left out (a cluster it
	// needs did not converge).
	OutcomeCreated Outcome = "created"
	OutcomeRotated Outcome = "rotated"
	OutcomeLeftOut Outcome = "left-out"
	// The default revision tag's besides: moved (it pointed at another revision),
	// configured (its objects changed).
	OutcomeMoved      Outcome = "moved"
	OutcomeConfigured Outcome = "configured"
)

// The outcomes each kind of thing can have.
var (
	RunOutcomes     = []Outcome{OutcomeSucceeded, OutcomeFailed, OutcomeInterrupted}
	ClusterOutcomes = []Outcome{OutcomeInstalled, OutcomeUnchanged, OutcomeRemoved, OutcomeFailed, OutcomeSkipped}
	LinkOutcomes    = []Outcome{OutcomeCreated, OutcomeUnchanged, OutcomeRotated, OutcomeRemoved, OutcomeLeftOut, OutcomeFailed}
	TagOutcomes     = []Outcome{OutcomeCreated, OutcomeMoved, OutcomeConfigured, OutcomeUnchanged}
	// A revision upgrade's batch: a run's outcomes.
	BatchOutcomes = RunOutcomes
)

// RunOutcome is the outcome of a run that ended with err: interrupted (err says the run
// was stopped), failed, or succeeded.
func RunOutcome(err error, interrupted bool) Outcome {
	switch {
	case interrupted:
		return OutcomeInterrupted
	case err != nil:
		return OutcomeFailed
	}
	return OutcomeSucceeded
}

// member checks that v is one of set; "" (unset) always is.
func member[T ~string](what string, v T, set []T) error {
	if v == "" || slices.Contains(set, v) {
		return nil
	}
	return fmt.Errorf("%s %q is not one of %v", what, string(v), set)
}
