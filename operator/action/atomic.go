package action

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// installedWithoutRecords says the revision, which has no install record, is installed (an
// istioctl without install history installed it): --atomic then has nothing to restore,
// and must not remove it.
func installedWithoutRecords(ctx context.Context, client *kube.Client, owner ownership.Owner) (bool, error) {
	installed, err := (&install.Installer{Client: client, Owner: owner}).Start().Targets(ctx, install.UninstallOptions{})
	return len(installed) > 0, err
}

// restore is --atomic after a failed install: it re-installs the revision's previous
// successful record (a Rollback), or without one removes the revision's components again,
// and returns an error saying both what failed and what was restored. Both are runs inside
// r: under its lock, their done events keeping its failure's exit code. What existed before
// a run that gives back (givesBack) is given back as it was first, and neither the
// rollback's prune nor the removal deletes it; the restore plan event says, before any
// write, what is given back and what is removed.
func (a *Install) restore(ctx context.Context, r *run, p *InstallPlan, out *InstallResult, cause error) error {
	events, failed := r.events, out.record
	rev := history.Rev(p.res.IOP.Spec.Revision)
	store := &history.Store{Client: p.client, Namespace: recordNamespace(p.res)}
	records, err := store.List(ctx, rev)
	if err != nil {
		return fmt.Errorf("install failed: %w\n--atomic could not read the install history to restore the previous install: %v", cause, err)
	}
	back, err := p.apply.PlanGiveBack(ctx, out.before)
	if err != nil {
		return fmt.Errorf("install failed: %w\n--atomic could not read what it is to give back: %v", cause, err)
	}
	prev := history.LastSucceeded(records)
	if prev == nil && p.unrecorded {
		left := "the failed install is left as it is"
		if a.givesBack() {
			left += ", but for what it adopted, which is given back"
		}
		events.Emit(event.Event{Type: event.Warning, Message: fmt.Sprintf(
			"install failed; --atomic cannot restore revision %s: it was installed before without an install record (by an istioctl without install history?), so %s", rev, left)})
		return withGiveBack(fmt.Errorf("install failed, and --atomic had no install record of revision %s to restore: %w", rev, cause),
			a.giveBack(ctx, r, p, back, nil, ""))
	}
	markFailed := func(outcome history.Outcome, note string) {
		if failed == nil || failed.Number == 0 {
			return // not recorded
		}
		failed.Outcome = outcome
		failed.SetDescription(note + " after: " + strings.TrimPrefix(failed.Description, "install failed: "))
		if err := store.Update(ctx, failed); err != nil {
			events.Emit(event.Event{Type: event.Warning, Message: "the install history does not say this install was rolled back: " + err.Error()})
		}
	}

	if prev == nil {
		what := "its components are removed again"
		if a.givesBack() {
			what = "what it adopted is given back, and the components it created are removed again"
		}
		events.Emit(event.Event{Type: event.Warning, Message: fmt.Sprintf(
			"install failed; --atomic: revision %s has no earlier successful install to restore, so %s (Base and its CRDs stay, as with uninstall)", rev, what)})
		owner := a.ownerOf(p.res)
		u := &Uninstall{Config: a.Config, Timeout: a.ReadinessTimeout, owner: &owner, componentsOnly: true, spare: out.before}
		t := uninstallTarget{owner: owner, recordNS: owner.Namespace}
		up, err := u.plan(ctx, r, t)
		if err != nil {
			return fmt.Errorf("install failed: %w\n--atomic could not plan the removal of revision %s: %v", cause, rev, err)
		}
		up.lock = r.planLockState(ctx)
		gave := a.giveBack(ctx, r, p, back, up.Targets, "")
		if up, err = u.steps(t).execute(ctx, r, up, false); err != nil {
			return withGiveBack(fmt.Errorf("install failed: %w\n--atomic could not remove revision %s either: %v", cause, rev, err), gave)
		}
		markFailed(history.Removed, fmt.Sprintf("removed (--atomic, %d objects)", len(up.targets)))
		return withGiveBack(fmt.Errorf("install failed, and --atomic removed revision %s again (there was no earlier successful install to restore): %w", rev, cause), gave)
	}

	if err := trusted(prev); err != nil {
		// A record istiod's ServiceAccount could have written steers no restore.
		// What this run adopted is still given back: its snapshot is this run's own reading.
		nothing := "nothing"
		if a.givesBack() {
			nothing += " but what it adopted, which is given back"
		}
		events.Emit(event.Event{Type: event.Warning, Message: "install failed; --atomic restores " + nothing + ": " + err.Error()})
		return withGiveBack(fmt.Errorf("install failed, and --atomic did not restore revision %s (%w); what failed: %w", rev, err, cause),
			a.giveBack(ctx, r, p, back, nil, ""))
	}
	events.Emit(event.Event{Type: event.Warning, Message: fmt.Sprintf(
		"install failed; --atomic: restoring revision %s to record %d (profile %s, installed by istioctl %s at %s)",
		rev, prev.Number, prev.Profile, prev.ToolVersion, prev.Time.Format(time.RFC3339))})
	rb := &Rollback{Config: a.Config, ReadinessTimeout: a.ReadinessTimeout, HistoryMax: a.HistoryMax, TakeOwnership: a.TakeOwnership,
		target: prev, note: fmt.Sprintf(" (--atomic, after %d failed)", recordNumber(failed)), spare: out.before}
	rp, err := rb.plan(ctx, r)
	if err != nil {
		return fmt.Errorf("install failed: %w\n--atomic could not plan the restore of record %d: %v", cause, prev.Number, err)
	}
	rp.Install.lock = r.planLockState(ctx)
	gave := a.giveBack(ctx, r, p, back, rp.Install.Stale, fmt.Sprintf("then re-installs record %d", prev.Number))
	if _, err := rb.steps().execute(ctx, r, rp, false); err != nil {
		return withGiveBack(fmt.Errorf("install failed: %w\n--atomic could not restore record %d either: %v", cause, prev.Number, err), gave)
	}
	markFailed(history.RolledBack, fmt.Sprintf("rolled back to %d", prev.Number))
	return withGiveBack(fmt.Errorf("install failed, and --atomic restored revision %s to record %d (profile %s), which is installed and ready; what failed: %w",
		rev, prev.Number, prev.Profile, cause), gave)
}

// giveBack emits the restore plan (what is given back, what removed, what else follows)
// and gives back what the failed run wrote of what existed before it. A run that took no
// snapshot (givesBack) has neither: its restore is the rollback's or the removal's alone,
// its stream as it always was.
func (a *Install) giveBack(ctx context.Context, r *run, p *InstallPlan, back *install.GiveBack, remove []string, then string) error {
	if !a.givesBack() {
		return nil
	}
	r.events.Emit(event.Event{Type: event.RestorePlan, Message: then,
		RestoreDetail: event.RestoreDetail{GiveBack: back.Objects(), Remove: remove}})
	return p.apply.GiveBack(ctx, r.events, back)
}

// withGiveBack is a restore's error, saying also what it could not give back.
func withGiveBack(err, gave error) error {
	if gave == nil {
		return err
	}
	return fmt.Errorf("%w\n--atomic could not give back everything that existed before the run: %v", err, gave)
}

// recordNumber is a record's number, 0 for none.
func recordNumber(r *history.Record) int {
	if r == nil {
		return 0
	}
	return r.Number
}
