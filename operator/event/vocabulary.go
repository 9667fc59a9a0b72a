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

// RunResult is how a run (done) or a revision upgrade's batch (batch) ended: it did what it
// set out to do, failed (Error says why), or was stopped by Ctrl-C at a safe point.
type RunResult string

// The run results.
const (
	RunSucceeded   RunResult = "succeeded"
	RunFailed      RunResult = "failed"
	RunInterrupted RunResult = "interrupted"
)

var runResults = []RunResult{RunSucceeded, RunFailed, RunInterrupted}

// ResultOf is the result of a run that ended with err: interrupted (err says the run was
// stopped), failed, or succeeded.
func ResultOf(err error, interrupted bool) RunResult {
	switch {
	case interrupted:
		return RunInterrupted
	case err != nil:
		return RunFailed
	}
	return RunSucceeded
}

// ClusterOutcome is what a fleet run did to one of its clusters.
type ClusterOutcome string

// The cluster outcomes: installed, unchanged (nothing written), removed, failed or skipped
// (a cluster it needs failed).
const (
	ClusterInstalled ClusterOutcome = "installed"
	ClusterUnchanged ClusterOutcome = "unchanged"
	ClusterRemoved   ClusterOutcome = "removed"
	ClusterFailed    ClusterOutcome = "failed"
	ClusterSkipped   ClusterOutcome = "skipped"
)

var clusterOutcomes = []ClusterOutcome{ClusterInstalled, ClusterUnchanged, ClusterRemoved, ClusterFailed, ClusterSkipped}

// LinkOutcome is what a fleet run did to a link Secret.
type LinkOutcome string

// The link outcomes: created, unchanged, rotated (its token replaced), removed, left out (a
// cluster it needs did not converge) or failed.
const (
	LinkCreated   LinkOutcome = "created"
	LinkUnchanged LinkOutcome = "unchanged"
	LinkRotated   LinkOutcome = "rotated"
	LinkRemoved   LinkOutcome = "removed"
	LinkLeftOut   LinkOutcome = "left-out"
	LinkFailed    LinkOutcome = "failed"
)

var linkOutcomes = []LinkOutcome{LinkCreated, LinkUnchanged, LinkRotated, LinkRemoved, LinkLeftOut, LinkFailed}

// TagOutcome is what an install did to the default revision tag.
type TagOutcome string

// The tag outcomes: created, moved (it pointed at another revision), configured (its
// objects changed), unchanged.
const (
	TagCreated    TagOutcome = "created"
	TagMoved      TagOutcome = "moved"
	TagConfigured TagOutcome = "configured"
	TagUnchanged  TagOutcome = "unchanged"
)

var tagOutcomes = []TagOutcome{TagCreated, TagMoved, TagConfigured, TagUnchanged}

// KeptReason is why an object the plan was to delete was left (a kept event): the delete,
// sent with the plan's UID and resourceVersion, found it changed, and reading it again
// showed it is no longer the plan's to delete.
type KeptReason string

// The kept reasons: it carries the opt-out label now, it was deleted and re-created by
// someone else after the plan read it (another UID), or it is no longer ours by the rule
// that chose it (its labels or field managers changed).
const (
	KeptOptOut    KeptReason = "opt-out"
	KeptRecreated KeptReason = "recreated"
	KeptNotOurs   KeptReason = "not-ours"
)

// The reasons a fleet run keeps what a context name or a label alone would have had it
// delete: the cluster a link records is one of the file's (the same kube-system UID:
// another context names it), the link records no cluster identity (written by an older
// istioctl), that the cluster left the fleet is not proven (its context reaches another
// cluster, or a cluster of the file could not be identified), or a Secret carries the
// fleet's label but is no link this istioctl wrote.
const (
	KeptSameCluster KeptReason = "same-cluster"
	KeptNoIdentity  KeptReason = "no-identity"
	KeptUnproven    KeptReason = "unproven"
	KeptNotALink    KeptReason = "not-a-link"
)

var keptReasons = []KeptReason{KeptOptOut, KeptRecreated, KeptNotOurs, KeptSameCluster, KeptNoIdentity, KeptUnproven, KeptNotALink}

// RestoreOutcome is what install --atomic's restore did with an object that existed before
// the failed run (a restored event).
type RestoreOutcome string

// The restore outcomes: given back as it was; left, because it no longer exists or was
// deleted and created again by someone else after the run read it (another UID); or
// failed (Error says why). The restore never creates or deletes such an object.
const (
	RestoreGivenBack RestoreOutcome = "given-back"
	RestoreGone      RestoreOutcome = "gone"
	RestoreRecreated RestoreOutcome = "recreated"
	RestoreFailed    RestoreOutcome = "failed"
)

var restoreOutcomes = []RestoreOutcome{RestoreGivenBack, RestoreGone, RestoreRecreated, RestoreFailed}

// SkipReason is why a revision upgrade left an entry of its plan or progress record (a
// skipped event).
type SkipReason string

// The skip reasons: the object was deleted since; none of the workload's pods is injected
// by the old or the new revision anymore; the workload is outside --namespaces (a later run
// without it moves it); the namespace's istio.io/rev label no longer carries the recorded
// value.
const (
	SkipDeleted           SkipReason = "deleted"
	SkipNotInjected       SkipReason = "not-injected"
	SkipOutsideNamespaces SkipReason = "outside-namespaces"
	SkipLabelChanged      SkipReason = "label-changed"
)

var skipReasons = []SkipReason{SkipDeleted, SkipNotInjected, SkipOutsideNamespaces, SkipLabelChanged}

// member checks that v is one of set; "" (unset) always is.
func member[T ~string](what string, v T, set []T) error {
	if v == "" || slices.Contains(set, v) {
		return nil
	}
	return fmt.Errorf("%s %q is not one of %v", what, string(v), set)
}
