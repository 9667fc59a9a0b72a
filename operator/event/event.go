package event

import (
	"sync"
	"time"
)

// Type says what happened.
type Type string

// The event types.
const (
	// Plan says what will happen, before anything does (Message: a summary; Total: the
	// number of objects).
	Plan Type = "plan"
	// ComponentStarted: a component's parents are healthy and its objects are being applied.
	ComponentStarted Type = "component-started"
	// Applied: one object was applied (Status: created, configured, unchanged).
	Applied Type = "applied"
	// Waiting: an object is not ready yet (Message says why); sent when the reason changes.
	Waiting Type = "waiting"
	// Ready: an object became ready.
	Ready Type = "ready"
	// ComponentReady: every object of a component is applied and ready.
	ComponentReady Type = "component-ready"
	// ComponentFailed: a component could not be applied or did not become ready (Error).
	ComponentFailed Type = "component-failed"
	// ComponentSkipped: a component was not applied because a parent failed.
	ComponentSkipped Type = "component-skipped"
	// NodeBatchStarted: an upgrade replaces the pods of a node DaemonSet (Object) on a batch
	// of nodes (Nodes; Batch of Batches): their old pods are being deleted.
	NodeBatchStarted Type = "node-batch-started"
	// NodeBatchReady: every node of the batch runs a Ready pod of the new template.
	NodeBatchReady Type = "node-batch-ready"
	// NodeBatchFailed: a node of the batch did not get a Ready new pod (Error names the node
	// and the cause); the rollout stopped there.
	NodeBatchFailed Type = "node-batch-failed"
	// Pruned: an object we owned and no longer render was deleted.
	Pruned Type = "pruned"
	// Kept: an object the plan was to delete (prune, uninstall, a Helm release's record)
	// was left, because what the cluster holds changed since the plan read it (KeptReason
	// says how; Object: the object, Component: its component). In a fleet run: a link
	// Secret, or the links of a cluster the file no longer names, left because nothing
	// proves they are the fleet's to delete (Cluster: where they are; Message: why, and
	// what to do).
	Kept Type = "kept"
	// RestorePlan: the restore of a failed install --take-ownership --atomic, before it
	// writes: GiveBack, the objects that existed before the run and that it wrote, to be
	// given back as they were (content, labels, annotations, field managers); Remove, the
	// objects it removes (only ones that did not exist before the run); Message, what else
	// the restore does (the install record it re-installs).
	RestorePlan Type = "restore-plan"
	// Restored: one object of a restore plan's GiveBack (Object; RestoreOutcome says what
	// became of it; Message names who manages it again; Error why it could not be written).
	Restored Type = "restored"
	// Skipped: a revision upgrade left an entry of its plan or progress record (a workload
	// to restart, a namespace to relabel), because the cluster no longer holds it as the
	// record says (SkipReason says how; Object: the object; Message: what it is now).
	Skipped Type = "skipped"
	// Check: before anything is written, a check of a piece the run relies on (an existing
	// control plane, the CA, Prometheus) passed (Object, Message). One that failed without
	// stopping the run is a Warning.
	Check Type = "check"
	// Warning: something worth saying that does not stop the run.
	Warning Type = "warning"
	// WatchStalled: a watch a wait relies on delivered nothing (no event, no bookmark) for a
	// while, yet a read of its objects shows changes it did not deliver: something between
	// istioctl and the apiserver holds watch streams silent. Watch names it, LastHeard is
	// when it last delivered, Details the objects it missed, Message what to check; the
	// wait goes on by reads, so the run does not fail for it.
	WatchStalled Type = "watch-stalled"
	// RevisionTag: after a successful install, the default revision tag points at the
	// installed revision (Status: created, moved, configured, unchanged; Details: upstream's
	// notice when the default moved back to the default revision).
	RevisionTag Type = "revision-tag"
	// HelmReleaseRetired: after a successful install, a Helm release whose objects the
	// install took over was retired: its release records were deleted, its objects left as
	// they are (Object: the release, namespace/name; Status: retired, or "would be retired"
	// in a dry run; Details: the records).
	HelmReleaseRetired Type = "helm-release-retired"
	// Lock: the cluster lock, when it is not simply taken and released: Status waiting (another
	// holds it: Holder, Since), acquired (after a wait), taken-over (an expired lock; Holder
	// is the previous holder) or lost (the run stops writing; Error says why).
	Lock Type = "lock"
	// Link: a fleet run made, kept or removed a link Secret (Cluster: the cluster it is in;
	// Object: the Secret; Action: created, rotated, unchanged, removed or left-out; Message:
	// whose credentials it holds, or why it was left out).
	Link Type = "link"
	// Batch: a revision upgrade's batch of workloads ended (Outcome: succeeded, failed,
	// interrupted; Total: its workloads; Message: "batch 2/4: ..."; Error and Details name
	// the workload that did not become ready and why).
	Batch Type = "batch"
	// Done: the run ended (Error when it failed; ExitCode the code istioctl exits with).
	Done Type = "done"
)

// Event is one thing that happened: a header any event may carry, and the payload of its
// type, each payload's fields declared once in its own struct (ObjectChange, PlanDetail, ...).
// Its state is typed (Action, Operation, the outcomes, Lock, DryRun); its JSON form
// (MarshalJSON) is the stream's, with the status field worded from those types as
// docs/events.md says.
type Event struct {
	Time time.Time
	Type Type
	// Cluster is, in a fleet run, the fleet cluster the event is about (unset on the
	// fleet's own last done).
	Cluster string
	// Component is the component instance ("Pilot", "IngressGateways/edge"), if any.
	Component string
	// Title and Icon name the component for people.
	Title string
	Icon  string
	// Object is Kind/namespace/name, if the event is about one object.
	Object  string
	Message string
	Error   string
	// Details are extra lines (e.g. the objects that were not ready, with their reasons).
	Details []string
	// Total counts objects: all of a run's on plan, a component's on component-started, a
	// batch's workloads on batch.
	Total int
	// DryRun says, on plan, done and helm-release-retired, that nothing is written.
	DryRun bool

	// The payloads, by the types that carry them.
	ObjectChange   // applied, pruned
	PlanDetail     // plan
	NodeBatch      // node-batch-started, -ready, -failed
	LockChange     // lock
	RunEnd         // done
	BatchEnd       // batch
	LinkChange     // link
	TagChange      // revision-tag
	KeptChange     // kept
	RestoreDetail  // restore-plan
	RestoredChange // restored
	SkipChange     // skipped
	WatchStall     // watch-stalled
}

// ObjectChange is the payload of applied and pruned events.
type ObjectChange struct {
	// Status is how the change is worded for people ("would be created (its namespace does
	// not exist yet, ...)", "removed from context x"): never branched on, Action is what
	// happened. Other events' status derives from their typed fields.
	Status string
	// Action is what happened to the object.
	Action Action
}

// PlanDetail is the payload of a plan event.
type PlanDetail struct {
	// SchemaVersion is the version of this event stream (SchemaVersion).
	SchemaVersion int
	// Plan is the components the run installs, in install order, with their stages.
	Plan []PlannedComponent
	// Changes is what the run will do to the objects, foreseen from what the cluster holds:
	// the totals and the counts per component.
	Changes *Changes
	// Leave is, on an uninstall's plan, the components the spec relies on and does not
	// install: they, the revision's tags and its install records stay.
	Leave []string
}

// NodeBatch is the payload of node-batch events: the nodes of the batch; Batch counts it
// (from 1) of Batches.
type NodeBatch struct {
	Nodes          []string
	Batch, Batches int
}

// LockChange is the payload of a lock event.
type LockChange struct {
	// Lock is what happened to the cluster lock.
	Lock LockState
	// Holder names who holds the cluster lock.
	Holder string
	// Since is when the holder took the lock, by its clock (waiting).
	Since time.Time
}

// RunEnd is the payload of a done event.
type RunEnd struct {
	// Operation is the kind of run that ended.
	Operation Operation
	// Result is how the run ended.
	Result RunResult
	// ExitCode is set on done only (0 included): the code istioctl exits with when this
	// done ends the stream (ExitOK, ExitFailed, ExitInterrupted).
	ExitCode *int
	// Fleet is, on a fleet run's last done, what happened in each cluster and to each link.
	Fleet *FleetOutcome
}

// BatchEnd is the payload of a batch event: how a revision upgrade's batch ended.
type BatchEnd struct {
	BatchResult RunResult
}

// LinkChange is the payload of a link event: what happened to the link Secret.
type LinkChange struct {
	LinkOutcome LinkOutcome
}

// KeptChange is the payload of a kept event: why the object was left.
type KeptChange struct {
	KeptReason KeptReason
}

// RestoreDetail is the payload of a restore-plan event: the objects given back and the
// objects removed, Kind/namespace/name each.
type RestoreDetail struct {
	GiveBack []string
	Remove   []string
}

// RestoredChange is the payload of a restored event: what became of the object.
type RestoredChange struct {
	RestoreOutcome RestoreOutcome
}

// SkipChange is the payload of a skipped event: why the entry was left.
type SkipChange struct {
	SkipReason SkipReason
}

// WatchStall is the payload of a watch-stalled event: the silent watch (resource, namespace,
// label selector) and when it last delivered an event or a bookmark (or was started).
type WatchStall struct {
	Watch     string
	LastHeard time.Time
}

// Stalled is base (its component, cluster) as a watch-stalled event: the watch, when it
// last delivered anything, the objects it missed, and the advice.
func Stalled(base Event, watch string, lastHeard time.Time, missed []string, advice string) Event {
	base.Type, base.Details, base.Message = WatchStalled, missed, advice
	base.WatchStall = WatchStall{Watch: watch, LastHeard: lastHeard}
	return base
}

// TagChange is the payload of a revision-tag event: what happened to the default tag.
type TagChange struct {
	TagOutcome TagOutcome
}

// FleetOutcome is what a fleet run did: a row per cluster, in the file's order, and per link.
type FleetOutcome struct {
	Clusters []FleetCluster `json:"clusters"`
	Links    []FleetLink    `json:"links"`
}

// FleetCluster is one cluster's outcome; Error says why it failed or was skipped.
type FleetCluster struct {
	Cluster string         `json:"cluster"`
	Role    string         `json:"role"`
	Outcome ClusterOutcome `json:"outcome"`
	Error   string         `json:"error,omitempty"`
	Seconds float64        `json:"seconds"`
}

// FleetLink is one link Secret's outcome (the link event's).
type FleetLink struct {
	Into    string      `json:"into"`
	From    string      `json:"from"`
	Secret  string      `json:"secret"`
	Outcome LinkOutcome `json:"outcome"`
	Error   string      `json:"error,omitempty"`
}

// InCluster returns a sink that marks every event passing to s as cluster's.
func InCluster(s Sink, cluster string) Sink { return inCluster{s, cluster} }

type inCluster struct {
	Sink
	cluster string
}

func (c inCluster) Emit(e Event) {
	e.Cluster = c.cluster
	c.Sink.Emit(e)
}

// SchemaVersion is the event stream's version. Types and fields are only ever added under
// it, and an existing status keeps its meaning (docs/events.md).
const SchemaVersion = 1

// PlannedComponent is one component instance of a plan: what it waits for and what it
// applies, stage by stage.
type PlannedComponent struct {
	Component string   `json:"component"`
	Title     string   `json:"title,omitempty"`
	Parents   []string `json:"parents,omitempty"`
	Stages    []Stage  `json:"stages"`
	// NodeBatches are, for a node DaemonSet an upgrade rolls node by node, the nodes whose
	// pods it replaces, batch by batch, in order.
	NodeBatches [][]string `json:"nodeBatches,omitempty"`
}

// Stage is a group of objects a component applies together; the next waits until it is ready.
type Stage struct {
	Name    string `json:"name"`
	Objects int    `json:"objects"`
}

// Changes counts what a run will do to the objects it renders and prunes: in total, and per
// component (those it installs, in install order, then those it only prunes).
type Changes struct {
	Counts
	Components []ComponentChanges `json:"components"`
}

// Summary is what a run will do, per component: the counts the plan event carries, and the
// objects that change. It is no event: the change summary printed before a run asks.
type Summary struct {
	Changes
	// Objects are, per component (the keys of Changes.Components), the objects the run
	// creates, updates, prunes or removes, in the run's order; unchanged ones are left out.
	Objects map[string][]ObjectPlan
	// DefaultTag is what an install does to the default revision tag (nil: nothing).
	DefaultTag *TagStep
}

// ObjectPlan is one object of a summary: what the run does to it, and for an update the
// paths of the fields that change (never values).
type ObjectPlan struct {
	Object string
	Action Action
	Fields []string
}

// TagStep is an install's step on the default revision tag.
type TagStep struct {
	// Revision is the revision the tag will point at; From the one it points at now ("":
	// there is no default tag yet).
	Revision, From string
}

// Writes says whether the run writes anything: an object created, updated, pruned or
// removed, or the default tag created or moved.
func (s *Summary) Writes() bool {
	return s.Counts.Changes() || (s.DefaultTag != nil && s.DefaultTag.From != s.DefaultTag.Revision)
}

// LinkStep is what a fleet run's plan does to a link Secret: create it, check it (kept
// while its token authenticates), or remove it.
type LinkStep string

// The link steps.
const (
	LinkStepCreate LinkStep = "create"
	LinkStepCheck  LinkStep = "check"
	LinkStepRemove LinkStep = "remove"
)

// ComponentChanges is one component's share of Changes.
type ComponentChanges struct {
	Component string `json:"component"`
	Title     string `json:"title,omitempty"`
	Counts
}

// Counts counts objects by what a run does to them. Update counts the objects whose applied
// hash differs from the rendered one (the server decides what changes); Remove is an
// uninstall's.
type Counts struct {
	Create    int `json:"create"`
	Update    int `json:"update"`
	Unchanged int `json:"unchanged"`
	Prune     int `json:"prune"`
	Remove    int `json:"remove,omitempty"`
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Create += o.Create
	c.Update += o.Update
	c.Unchanged += o.Unchanged
	c.Prune += o.Prune
	c.Remove += o.Remove
}

// Changes says whether the counts include anything but unchanged objects.
func (c Counts) Changes() bool { return c.Create+c.Update+c.Prune+c.Remove > 0 }

// Sink receives events; it must be safe for concurrent use.
type Sink interface {
	Emit(Event)
}

// SinkFunc is a function as a Sink.
type SinkFunc func(Event)

// Emit calls f.
func (f SinkFunc) Emit(e Event) { f(e) }

// Stamped returns a sink that sets each event's time as it is emitted (when unset) and
// passes it on to s.
func Stamped(s Sink) Sink {
	if st, ok := s.(stamped); ok {
		return st
	}
	return stamped{s}
}

type stamped struct{ Sink }

func (s stamped) Emit(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	s.Sink.Emit(e)
}

// Discard drops events.
type Discard struct{}

// Emit does nothing.
func (Discard) Emit(Event) {}

// Recorder keeps events, for tests.
type Recorder struct {
	mu     sync.Mutex
	Events []Event
}

// Emit records e.
func (r *Recorder) Emit(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Events = append(r.Events, e)
}

// Of returns the recorded events of type t.
func (r *Recorder) Of(t Type) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, e := range r.Events {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}
