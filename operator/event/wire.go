package event

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// wire is an event as the stream carries it (docs/events.md), field by field in the
// stream's order: what CI systems parse. Its status and action are worded from the
// event's typed fields (status); leave came after schemaVersion 1's first fields.
type wire struct {
	Time          time.Time          `json:"time"`
	Type          Type               `json:"type"`
	Cluster       string             `json:"cluster,omitempty"`
	Component     string             `json:"component,omitempty"`
	Title         string             `json:"title,omitempty"`
	Icon          string             `json:"icon,omitempty"`
	Object        string             `json:"object,omitempty"`
	Status        string             `json:"status,omitempty"`
	Message       string             `json:"message,omitempty"`
	Error         string             `json:"error,omitempty"`
	Total         int                `json:"total,omitempty"`
	Details       []string           `json:"details,omitempty"`
	Holder        string             `json:"holder,omitempty"`
	Since         time.Time          `json:"since,omitzero"`
	Action        string             `json:"action,omitempty"`
	Operation     Operation          `json:"operation,omitempty"`
	SchemaVersion int                `json:"schemaVersion,omitempty"`
	Plan          []PlannedComponent `json:"plan,omitempty"`
	Changes       *Changes           `json:"changes,omitempty"`
	ExitCode      *int               `json:"exitCode,omitempty"`
	Fleet         *FleetOutcome      `json:"fleet,omitempty"`
	Leave         []string           `json:"leave,omitempty"`
	Nodes         []string           `json:"nodes,omitempty"`
	Batch         int                `json:"batch,omitempty"`
	Batches       int                `json:"batches,omitempty"`
	GiveBack      []string           `json:"giveBack,omitempty"`
	Remove        []string           `json:"remove,omitempty"`
	Watch         string             `json:"watch,omitempty"`
}

// The status words of the stream that derive from typed fields.
const (
	statusDryRun       = "dry-run"
	statusRetired      = "retired"
	statusWouldRetire  = "would be retired"
	statusInterrupted  = "interrupted"
	statusRollbackDone = "rollback"
	statusUninstalled  = "uninstall"
)

// MarshalJSON writes the event as the stream carries it; a value outside its closed set
// is an error.
func (e Event) MarshalJSON() ([]byte, error) {
	if err := e.check(); err != nil {
		return nil, fmt.Errorf("%s event: %w", e.Type, err)
	}
	w := wire{Time: e.Time, Type: e.Type, Cluster: e.Cluster, Component: e.Component, Title: e.Title, Icon: e.Icon,
		Object: e.Object, Status: e.status(), Message: e.Message, Error: e.Error, Total: e.Total, Details: e.Details,
		Holder: e.Holder, Since: e.Since, Action: string(e.Action), Operation: e.Operation, SchemaVersion: e.SchemaVersion,
		Plan: e.Plan, Changes: e.Changes, ExitCode: e.ExitCode, Fleet: e.Fleet, Leave: e.Leave,
		Nodes: e.Nodes, Batch: e.Batch, Batches: e.Batches, GiveBack: e.GiveBack, Remove: e.Remove, Watch: e.Watch}
	switch e.Type {
	case Link:
		w.Action = string(e.LinkOutcome) // a link's outcome is its action, as in fleet.links
	case WatchStalled:
		w.Since = e.LastHeard // since when the watch is silent, as a lock's holder holds it
	}
	return json.Marshal(w)
}

// Wording is the event's status as the stream words it ("dry-run", "would be retired",
// "taken-over", ...): for people to read, never to branch on.
func (e Event) Wording() string { return e.status() }

// status words the event's status field: derived from the typed fields for the events
// that have them, Status's wording otherwise.
func (e Event) status() string {
	switch e.Type {
	case Plan:
		if e.DryRun {
			return statusDryRun
		}
		return ""
	case Done:
		return e.doneStatus()
	case Lock:
		return string(e.Lock)
	case RevisionTag:
		return string(e.TagOutcome)
	case Link:
		return string(e.LinkOutcome)
	case Batch:
		return string(e.BatchResult)
	case HelmReleaseRetired:
		if e.DryRun {
			return statusWouldRetire
		}
		return statusRetired
	case Kept:
		return string(e.KeptReason)
	case Restored:
		return string(e.RestoreOutcome)
	case Skipped:
		return string(e.SkipReason)
	}
	return e.Status
}

// doneStatus is a done event's status: interrupted; dry-run after a dry run that went
// through; rollback after a rollback (failed or not); uninstall after an uninstall that
// went through. A fleet's done says only that it was interrupted.
func (e Event) doneStatus() string {
	switch {
	case e.Result == RunInterrupted:
		return statusInterrupted
	case e.Fleet != nil:
		return ""
	case e.DryRun && e.Result == RunSucceeded:
		return statusDryRun
	case e.Operation == OperationRollback:
		return statusRollbackDone
	case e.Operation == OperationUninstall && e.Result == RunSucceeded:
		return statusUninstalled
	}
	return ""
}

// check says whether each typed field holds a value of its closed set.
func (e Event) check() error {
	errs := []error{member("operation", e.Operation, operations), member("action", e.Action, actions),
		member("lock state", e.Lock, lockStates), member("result", e.Result, runResults),
		member("batch result", e.BatchResult, runResults), member("link outcome", e.LinkOutcome, linkOutcomes),
		member("tag outcome", e.TagOutcome, tagOutcomes), member("kept reason", e.KeptReason, keptReasons),
		member("restore outcome", e.RestoreOutcome, restoreOutcomes),
		member("skip reason", e.SkipReason, skipReasons)}
	if e.Fleet != nil {
		for _, c := range e.Fleet.Clusters {
			errs = append(errs, member("cluster outcome", c.Outcome, clusterOutcomes))
		}
		for _, l := range e.Fleet.Links {
			errs = append(errs, member("link outcome", l.Outcome, linkOutcomes))
		}
	}
	return errors.Join(errs...)
}

// UnmarshalJSON reads an event of the stream back into its typed fields.
func (e *Event) UnmarshalJSON(b []byte) error {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Event{Time: w.Time, Type: w.Type, Cluster: w.Cluster, Component: w.Component, Title: w.Title, Icon: w.Icon,
		Object: w.Object, Message: w.Message, Error: w.Error, Total: w.Total, Details: w.Details,
		PlanDetail:    PlanDetail{SchemaVersion: w.SchemaVersion, Plan: w.Plan, Changes: w.Changes, Leave: w.Leave},
		NodeBatch:     NodeBatch{Nodes: w.Nodes, Batch: w.Batch, Batches: w.Batches},
		LockChange:    LockChange{Holder: w.Holder, Since: w.Since},
		RunEnd:        RunEnd{Operation: w.Operation, ExitCode: w.ExitCode, Fleet: w.Fleet},
		RestoreDetail: RestoreDetail{GiveBack: w.GiveBack, Remove: w.Remove}, WatchStall: WatchStall{Watch: w.Watch}}
	switch w.Type {
	case Plan:
		e.DryRun = w.Status == statusDryRun
	case Done:
		e.DryRun = w.Status == statusDryRun
		e.Result = ResultOf(errorOf(w.Error), w.Status == statusInterrupted)
	case Lock:
		e.Lock = LockState(w.Status)
	case RevisionTag:
		e.TagOutcome = TagOutcome(w.Status)
	case Batch:
		e.BatchResult = RunResult(w.Status)
	case Link:
		e.LinkOutcome = LinkOutcome(w.Action)
	case HelmReleaseRetired:
		e.DryRun = w.Status == statusWouldRetire
	case Kept:
		e.KeptReason = KeptReason(w.Status)
	case Restored:
		e.RestoreOutcome = RestoreOutcome(w.Status)
	case Skipped:
		e.SkipReason = SkipReason(w.Status)
	case WatchStalled:
		e.LastHeard, e.Since = w.Since, time.Time{}
	default:
		e.Status, e.Action = w.Status, Action(w.Action)
	}
	if err := e.check(); err != nil {
		return fmt.Errorf("%s event: %w", e.Type, err)
	}
	return nil
}

func errorOf(msg string) error {
	if msg == "" {
		return nil
	}
	return errors.New(msg)
}
