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
// r: under its lock, their done events keeping its failure's exit code.
func (a *Install) restore(ctx context.Context, r *run, p *InstallPlan, failed *history.Record, cause error) error {
	events := r.events
	rev := history.Rev(p.res.IOP.Spec.Revision)
	store := &history.Store{Client: p.client, Namespace: recordNamespace(p.res)}
	records, err := store.List(ctx, rev)
	if err != nil {
		return fmt.Errorf("install failed: %w\n--atomic could not read the install history to restore the previous install: %v", cause, err)
	}
	prev := history.LastSucceeded(records)
	if prev == nil && p.unrecorded {
		events.Emit(event.Event{Type: event.Warning, Message: fmt.Sprintf(
			"install failed; --atomic cannot restore revision %s: it was installed before without an install record (by an istioctl without install history?), so the failed install is left as it is", rev)})
		return fmt.Errorf("install failed, and --atomic had no install record of revision %s to restore: %w", rev, cause)
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
		events.Emit(event.Event{Type: event.Warning, Message: fmt.Sprintf(
			"install failed; --atomic: revision %s has no earlier successful install to restore, so its components are removed again (Base and its CRDs stay, as with uninstall)", rev)})
		owner := a.ownerOf(p.res)
		u := &Uninstall{Config: a.Config, Timeout: a.ReadinessTimeout, owner: &owner, componentsOnly: true}
		up, err := u.steps(uninstallTarget{owner: owner, recordNS: owner.Namespace}).execute(ctx, r, nil, false)
		if err != nil {
			return fmt.Errorf("install failed: %w\n--atomic could not remove revision %s either: %v", cause, rev, err)
		}
		markFailed(history.Removed, fmt.Sprintf("removed (--atomic, %d objects)", len(up.targets)))
		return fmt.Errorf("install failed, and --atomic removed revision %s again (there was no earlier successful install to restore): %w", rev, cause)
	}

	if err := trusted(prev); err != nil {
		// A record istiod's ServiceAccount could have written steers no restore.
		events.Emit(event.Event{Type: event.Warning, Message: "install failed; --atomic restores nothing: " + err.Error()})
		return fmt.Errorf("install failed, and --atomic did not restore revision %s (%w); what failed: %w", rev, err, cause)
	}
	events.Emit(event.Event{Type: event.Warning, Message: fmt.Sprintf(
		"install failed; --atomic: restoring revision %s to record %d (profile %s, installed by istioctl %s at %s)",
		rev, prev.Number, prev.Profile, prev.ToolVersion, prev.Time.Format(time.RFC3339))})
	rb := &Rollback{Config: a.Config, ReadinessTimeout: a.ReadinessTimeout, HistoryMax: a.HistoryMax, TakeOwnership: a.TakeOwnership,
		target: prev, note: fmt.Sprintf(" (--atomic, after %d failed)", recordNumber(failed))}
	if _, err := rb.steps().execute(ctx, r, nil, false); err != nil {
		return fmt.Errorf("install failed: %w\n--atomic could not restore record %d either: %v", cause, prev.Number, err)
	}
	markFailed(history.RolledBack, fmt.Sprintf("rolled back to %d", prev.Number))
	return fmt.Errorf("install failed, and --atomic restored revision %s to record %d (profile %s), which is installed and ready; what failed: %w",
		rev, prev.Number, prev.Profile, cause)
}

// recordNumber is a record's number, 0 for none.
func recordNumber(r *history.Record) int {
	if r == nil {
		return 0
	}
	return r.Number
}
