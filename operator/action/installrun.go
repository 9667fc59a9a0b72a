package action

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/operator/tag"
)

// The steps of an install's run (Install.steps), after its plan.

// announce says what the run will do: the objects it adopts, the Helm releases it leaves
// or cannot retire, then the plan event with its foreseen changes.
func (a *Install) announce(ctx context.Context, r *run, p *InstallPlan) {
	for _, f := range p.Foreign {
		msg := "adopted from " + f.Manager + ": this install now owns it (re-applies, prunes and uninstalls it)"
		r.events.Emit(event.Event{Type: event.Warning, Object: f.Object, Message: msg})
	}
	a.helmWarnings(p, r.events)
	start := event.Event{Type: event.Plan, Total: p.Objects, Message: fmt.Sprintf("%d objects in %d components", p.Objects, p.Components),
		DryRun:     a.DryRun,
		PlanDetail: event.PlanDetail{SchemaVersion: event.SchemaVersion, Plan: install.PlanOf(p.manifests, p.apply.Opts.Upgrade)}}
	// An upgrade's node DaemonSets: the node batches their pods are replaced in. Should the
	// reads fail, the run fails on the same reads and says why.
	if nb, err := p.apply.NodeBatches(ctx, p.manifests); err == nil {
		for i := range start.Plan {
			start.Plan[i].NodeBatches = nb[start.Plan[i].Component]
		}
	}
	// The counts come from the metadata lists the plan read and the apply reuses: no
	// request. Should they fail, the apply fails on the same reads and says why.
	if s, err := p.Summary(ctx, false); err == nil {
		start.Changes = &s.Changes
	}
	r.events.Emit(start)
	if p.recordsErr != nil {
		r.events.Emit(event.Event{Type: event.Warning, Message: "the install history cannot be read, so this run is named an install and recorded anew: " + p.recordsErr.Error()})
	}
}

// carryOut applies the plan, then points the default revision tag at the revision and
// retires the Helm releases the install emptied.
func (a *Install) carryOut(ctx context.Context, r *run, p *InstallPlan) (*InstallResult, error) {
	var before *install.Snapshot
	if a.givesBack() {
		var err error
		if before, err = p.apply.Snapshot(ctx, p.manifests); err != nil {
			return &InstallResult{installErr: err}, err // nothing written: nothing to restore
		}
	}
	result, installErr := p.apply.Install(ctx, r.events, a.Hooks, p.manifests, p.stale)
	if installErr == nil && !a.DryRun && p.defaultTag.Needed {
		var tagged []tag.Change
		tagged, installErr = p.defaultTag.Run(ctx, p.client, r.events)
		// The tag's objects are written by this run too: they count.
		for _, ch := range tagged {
			result.Changes = append(result.Changes, install.Change{Object: ch.Object, Component: tagGroup, Action: install.Action(ch.Action)})
		}
	}
	err := installErr
	if err == nil {
		// Only once the install stands: the releases' objects are now this install's.
		err = a.retireHelm(ctx, p, r.events)
	}
	out := &InstallResult{Applied: result.Applied(), Unchanged: result.Unchanged(), Pruned: result.Pruned(), Changes: result.Changes,
		installErr: installErr, before: before}
	return out, err
}

// recordRun writes the run into the revision's install history (Outcome from what the
// install itself did). A record that cannot be written is a warning: the install stands.
func (a *Install) recordRun(ctx context.Context, r *run, p *InstallPlan, out *InstallResult, _ error) {
	what := a.what
	if what == "" {
		what = "install"
	}
	res := p.res
	rec := &history.Record{Action: a.action(), RollbackOf: a.rollbackOf, Revision: res.IOP.Spec.Revision, Time: time.Now().UTC(),
		ToolVersion: r.cfg.Version, Profile: res.Profile, Digests: p.digests}
	out.record = rec
	if y, derr := spec.YAML(res.Tree); derr == nil {
		rec.Spec = string(y)
	}
	rec.Objects, rec.ObjectsOmitted = identities(p.manifests)
	if r.held != nil {
		rec.Run = r.held.Identity()
	}
	var stopped *install.InterruptedError
	switch {
	case errors.As(out.installErr, &stopped):
		// Ctrl-C (or a lost lock): what is installed is part of it, as a killed run's.
		rec.Outcome = history.Interrupted
		rec.SetDescription(what + " " + stopped.Error())
	case out.installErr != nil:
		rec.Outcome = history.Failed
		rec.SetDescription(what + " failed: " + out.installErr.Error())
	default:
		rec.Outcome = history.Succeeded
		rec.SetDescription(fmt.Sprintf("%s complete (%d applied, %d unchanged, %d pruned)", what, out.Applied, out.Unchanged, out.Pruned))
	}
	if out.installErr == nil && out.Applied == 0 && out.Pruned == 0 && history.Repeats(p.records, rec) {
		// A re-install that changed nothing repeats the last record: no new one.
		rec.Number = p.records[len(p.records)-1].Number
		out.Record = rec.Number
		return
	}
	// Recorded even when the run was interrupted: a fresh deadline for the write.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	store := &history.Store{Client: p.client, Namespace: recordNamespace(res)}
	switch err := store.Create(wctx, rec, a.HistoryMax); {
	case errors.Is(err, history.ErrNotSealed):
		r.events.Emit(event.Event{Type: event.Warning, Message: fmt.Sprintf(
			"this run's install record %d is not sealed, so rollback, --atomic and --pin-digests will not trust it: %v", rec.Number, err)})
	case err != nil:
		rec.Number = 0
		r.events.Emit(event.Event{Type: event.Warning, Message: "this run is not in the install history: " + err.Error()})
	}
	out.Record = rec.Number
}

// operation names the run for its done event: a rollback, an upgrade when the revision
// already had a successful install, an install otherwise.
func (p *InstallPlan) operation(action string) event.Operation {
	if action == history.ActionRollback {
		return event.OperationRollback
	}
	if history.LastSucceeded(p.records) != nil {
		return event.OperationUpgrade
	}
	return event.OperationInstall
}

// upgrades says the run upgrades what runs in place (an upgrade, not a rollback): the
// install goes in the order of the skew rule upgrade-order, node DaemonSets node by node.
func (p *InstallPlan) upgrades(action string) bool {
	return p.operation(action) == event.OperationUpgrade
}

// doneEvent is the run's last event: what it did, or why it stopped.
func (a *Install) doneEvent(p *InstallPlan, out *InstallResult, err error) event.Event {
	e := event.Event{RunEnd: event.RunEnd{Operation: p.operation(a.action())}}
	var interrupted *install.InterruptedError
	counts := fmt.Sprintf("%d applied, %d unchanged, %d pruned", out.Applied, out.Unchanged, out.Pruned)
	switch {
	case errors.As(err, &interrupted):
		// A default-tag step stopped by Ctrl-C fails with exit code 130 (the protocol's,
		// from the error), but it did not stop the install at a safe point.
		e.Result = event.RunInterrupted
		return e
	case err != nil:
	case a.DryRun:
		e.Message = fmt.Sprintf("%d would be applied, %d unchanged, %d would be pruned", out.Applied, out.Unchanged, out.Pruned)
		return e
	default:
		e.Message = counts
	}
	if a.rollbackOf > 0 {
		// A rollback's end names its record, so the printers do not say "Installation
		// complete" after an install that failed.
		e.Message = fmt.Sprintf("record %d", a.rollbackOf)
		if err == nil {
			e.Message += ": " + counts
		}
	}
	return e
}

// after is what follows a failed run's done: the hint of a run that did not become ready,
// or with Atomic the restore of the revision's previous install, under the same lock.
func (a *Install) after(ctx context.Context, r *run, p *InstallPlan, out *InstallResult, err error) error {
	var notReady *install.NotReadyError
	var retireErr *retireError
	atomic := a.Atomic && !a.DryRun
	if errors.As(err, &notReady) && !atomic && ctx.Err() == nil && a.rollbackOf == 0 {
		err = fmt.Errorf("%w\nFix what the lines above name (or allow more time with --readiness-timeout), then run the same install again: it continues from what is applied", err)
	}
	if err == nil || !atomic || errors.As(err, &retireErr) {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w (--atomic did not roll back: the run was interrupted)", err)
	}
	if a.givesBack() && out.before == nil {
		return fmt.Errorf("%w (--atomic had nothing to restore: nothing was written)", err)
	}
	return a.restore(ctx, r, p, out, err)
}

// replan plans again, quietly, and says how the new plan differs from the one shown.
func (a *Install) replan(ctx context.Context, r *run, shown *InstallPlan) (*InstallPlan, []string, error) {
	before, err := shown.Changes(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Planning may change the rendered objects (the default tag deactivates an injector), so
	// the new plan starts from a fresh render.
	rd, err := render.NewRenderer(shown.res.IOP.Spec.InstallPackagePath)
	if err != nil {
		return nil, nil, err
	}
	manifests, _, err := rd.Render(shown.res)
	if err != nil {
		return nil, nil, err
	}
	fresh, err := a.planFor(ctx, r, shown.res, manifests)
	if err != nil {
		return nil, nil, err
	}
	now, err := fresh.Changes(ctx)
	if err != nil {
		return nil, nil, err
	}
	diff := changesDiff(before, now)
	if len(shown.Foreign) != len(fresh.Foreign) {
		diff = append(diff, fmt.Sprintf("objects not installed by istioctl: %d planned, %d now", len(shown.Foreign), len(fresh.Foreign)))
	}
	diff = append(diff, helmDiff(shown.HelmReleases, fresh.HelmReleases)...)
	if shown.SetsDefaultTag != fresh.SetsDefaultTag {
		diff = append(diff, fmt.Sprintf("sets the default revision tag: planned %v, now %v", shown.SetsDefaultTag, fresh.SetsDefaultTag))
	}
	return fresh, diff, nil
}

// PlanChangedError says the cluster changed between the plan that was shown and the run:
// nothing was written.
type PlanChangedError struct {
	// Changes say what the new plan does differently, one line each.
	Changes []string
}

func (e *PlanChangedError) Error() string {
	const max = 10
	lines := e.Changes
	if len(lines) > max {
		lines = append(lines[:max:max], fmt.Sprintf("and %d more", len(e.Changes)-max))
	}
	return "the cluster changed since the plan was made:\n  " + strings.Join(lines, "\n  ") +
		"\nNothing was written. Run the same command again to see the new plan"
}

// changesDiff says, object by object, how two foreseen change lists differ.
func changesDiff(before, now []install.Change) []string {
	was := map[string]install.Action{}
	for _, c := range before {
		was[c.Object] = c.Action
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range now {
		seen[c.Object] = true
		switch prev, ok := was[c.Object]; {
		case !ok:
			out = append(out, fmt.Sprintf("%s: not planned, now %s", c.Object, c.Action))
		case prev != c.Action:
			out = append(out, fmt.Sprintf("%s: planned %s, now %s", c.Object, prev, c.Action))
		}
	}
	for _, c := range before {
		if !seen[c.Object] {
			out = append(out, fmt.Sprintf("%s: planned %s, now nothing to do", c.Object, c.Action))
		}
	}
	return out
}
