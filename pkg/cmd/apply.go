package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/operator/tag"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// applyFlags are the flags of the commands that apply a spec: install, upgrade, rollback.
type applyFlags struct {
	SkipConfirmation bool
	DryRun           bool
	Timeout          time.Duration
	Output           string
	// HistoryMax is how many install records of the revision to keep (0: all).
	HistoryMax int
	// TakeOwnership adopts rendered objects that exist without istioctl's ownership.
	TakeOwnership bool
}

func (f *applyFlags) add(fs *pflag.FlagSet) {
	fs.BoolVarP(&f.SkipConfirmation, "skip-confirmation", "y", false, "Do not ask for confirmation (required when standard input is not a terminal)")
	fs.BoolVar(&f.DryRun, "dry-run", false, "Server-side dry run: the cluster validates everything, nothing is written")
	fs.DurationVar(&f.Timeout, "readiness-timeout", 5*time.Minute, "How long the whole install may wait for its components to become ready")
	fs.StringVarP(&f.Output, "output", "o", "text", "Progress output: text or json (one event per line)")
	fs.IntVar(&f.HistoryMax, "history-max", history.DefaultMax, "How many install records of the revision to keep in the cluster (0: no limit)")
	fs.BoolVar(&f.TakeOwnership, "take-ownership", false, "Adopt objects the install renders that exist without istioctl's ownership (e.g. a Helm release's); without it the run stops before writing anything")
}

// applier installs rendered specs through the Installer and records each run in the
// revision's history; with atomic, a failed install restores the previous successful record.
type applier struct {
	flags  applyFlags
	client *kube.Client
	events event.Sink
	errOut io.Writer
}

// recordNamespace is where a spec's install records live: the namespace its components go
// to by default (the istio namespace).
func recordNamespace(res *spec.Resolved) string {
	if ns := res.IOP.Spec.Namespace; ns != "" {
		return ns
	}
	if ns := res.IOP.Metadata.Namespace; ns != "" {
		return ns
	}
	return "istio-system"
}

// run installs manifests and, unless it is a dry run, records the run in rec (Action and
// RollbackOf set by the caller; what names the run in the record's description). A record
// that cannot be written is a warning: the install itself stands.
func (p *applier) run(ctx context.Context, res *spec.Resolved, manifests []render.Manifest, rec *history.Record, what string) error {
	events := p.events
	if rec.Action == history.ActionRollback {
		events = relabelDone{Sink: p.events, status: "rollback", what: fmt.Sprintf("record %d", rec.RollbackOf)}
	}
	owner := ownerOf(res)
	// The default revision tag (upstream's install step): decided before the install, which
	// may then apply the default revision's injector deactivated; set once it succeeded,
	// before its done event.
	defaultTag, err := tag.ForInstall(ctx, p.client, res, manifests, tagLabels(owner))
	if err != nil {
		return err
	}
	hold := &holdDone{Sink: events}
	in := &install.Installer{
		Client: p.client,
		Owner:  owner,
		Events: hold,
		Opts:   install.Options{DryRun: p.flags.DryRun, Timeout: p.flags.Timeout},
	}
	if err := p.checkOwnership(ctx, in, manifests); err != nil {
		return err // nothing written, nothing to record
	}
	result, err := in.Install(ctx, manifests)
	if err == nil && !p.flags.DryRun && defaultTag.Needed {
		err = defaultTag.Run(ctx, p.client, in.Events)
	}
	hold.release(err)
	if p.flags.DryRun {
		return err
	}
	rec.Revision = res.IOP.Spec.Revision
	rec.Time = time.Now().UTC()
	rec.ToolVersion = version.Version
	rec.Profile = res.Profile
	if y, derr := spec.Dump(res.Tree, "", spec.FormatYAML); derr == nil {
		rec.Spec = string(y)
	}
	rec.Objects, rec.ObjectsOmitted = identities(manifests)
	if err != nil {
		rec.Outcome = history.Failed
		rec.SetDescription(what + " failed: " + err.Error())
	} else {
		rec.Outcome = history.Succeeded
		rec.SetDescription(fmt.Sprintf("%s complete (%d applied, %d unchanged, %d pruned)", what, result.Applied, result.Unchanged, result.Pruned))
	}
	// Recorded even when the run was interrupted: a fresh deadline for the write.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	store := &history.Store{Client: p.client, Namespace: recordNamespace(res)}
	if err == nil && result.Applied == 0 && result.Pruned == 0 {
		if records, lerr := store.List(wctx, history.Rev(rec.Revision)); lerr == nil && history.Repeats(records, rec) {
			rec.Number = records[len(records)-1].Number
			return nil
		}
	}
	if werr := store.Create(wctx, rec, p.flags.HistoryMax); werr != nil {
		rec.Number = 0
		p.events.Emit(event.Event{Type: event.Warning, Message: "this run is not in the install history: " + werr.Error()})
	}
	return err
}

// install runs an install; when it fails and atomic is set, it restores the revision's
// previous successful record (or, without one, removes the revision's components again) and
// returns an error saying both what failed and what was restored.
func (p *applier) install(ctx context.Context, res *spec.Resolved, manifests []render.Manifest, atomic bool) error {
	atomic = atomic && !p.flags.DryRun
	unrecorded := false
	if atomic {
		var err error
		if unrecorded, err = p.unrecorded(ctx, res); err != nil {
			return err
		}
	}
	rec := &history.Record{Action: history.ActionInstall}
	err := p.run(ctx, res, manifests, rec, "install")
	var notReady *install.NotReadyError
	if errors.As(err, &notReady) && !atomic && ctx.Err() == nil {
		err = fmt.Errorf("%w\nFix what the lines above name (or allow more time with --readiness-timeout), then run the same install again: it continues from what is applied", err)
	}
	if err == nil || !atomic {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w (--atomic did not roll back: the run was interrupted)", err)
	}
	return p.restore(ctx, res, rec, unrecorded, err)
}

// unrecorded says the revision is installed but has no install record (an istioctl without
// install history installed it): --atomic then has nothing to restore, and must not remove it.
func (p *applier) unrecorded(ctx context.Context, res *spec.Resolved) (bool, error) {
	store := &history.Store{Client: p.client, Namespace: recordNamespace(res)}
	records, err := store.Secrets(ctx, history.Rev(res.IOP.Spec.Revision))
	if err != nil || len(records) > 0 {
		return false, err
	}
	in := &install.Installer{Client: p.client, Owner: ownerOf(res)}
	installed, err := in.Targets(ctx, install.UninstallOptions{})
	return len(installed) > 0, err
}

func (p *applier) restore(ctx context.Context, res *spec.Resolved, failed *history.Record, unrecorded bool, cause error) error {
	rev := history.Rev(res.IOP.Spec.Revision)
	store := &history.Store{Client: p.client, Namespace: recordNamespace(res)}
	records, err := store.List(ctx, rev)
	if err != nil {
		return fmt.Errorf("install failed: %w\n--atomic could not read the install history to restore the previous install: %v", cause, err)
	}
	prev := history.LastSucceeded(records)
	if prev == nil && unrecorded {
		p.events.Emit(event.Event{Type: event.Warning, Message: fmt.Sprintf(
			"install failed; --atomic cannot restore revision %s: it was installed before without an install record (by an istioctl without install history?), so the failed install is left as it is", rev)})
		return fmt.Errorf("install failed, and --atomic had no install record of revision %s to restore: %w", rev, cause)
	}
	markFailed := func(outcome history.Outcome, note string) {
		if failed.Number == 0 {
			return // not recorded
		}
		failed.Outcome = outcome
		failed.SetDescription(note + " after: " + strings.TrimPrefix(failed.Description, "install failed: "))
		if err := store.Update(ctx, failed); err != nil {
			p.events.Emit(event.Event{Type: event.Warning, Message: "the install history does not say this install was rolled back: " + err.Error()})
		}
	}

	if prev == nil {
		p.events.Emit(event.Event{Type: event.Warning, Message: fmt.Sprintf(
			"install failed; --atomic: revision %s has no earlier successful install to restore, so its components are removed again (Base and its CRDs stay, as with uninstall)", rev)})
		in := &install.Installer{Client: p.client, Owner: ownerOf(res), Events: p.events}
		uopts := install.UninstallOptions{Timeout: p.flags.Timeout}
		targets, err := in.Targets(ctx, uopts)
		if err == nil {
			err = in.Uninstall(ctx, targets, uopts)
		}
		if err != nil {
			return fmt.Errorf("install failed: %w\n--atomic could not remove revision %s either: %v", cause, rev, err)
		}
		markFailed(history.Removed, fmt.Sprintf("removed (--atomic, %d objects)", len(targets)))
		return fmt.Errorf("install failed, and --atomic removed revision %s again (there was no earlier successful install to restore): %w", rev, cause)
	}

	p.events.Emit(event.Event{Type: event.Warning, Message: fmt.Sprintf(
		"install failed; --atomic: restoring revision %s to record %d (profile %s, installed by istioctl %s at %s)",
		rev, prev.Number, prev.Profile, prev.ToolVersion, prev.Time.Format(time.RFC3339))})
	if err := p.rollback(ctx, prev, fmt.Sprintf(" (--atomic, after %d failed)", failed.Number)); err != nil {
		return fmt.Errorf("install failed: %w\n--atomic could not restore record %d either: %v", cause, prev.Number, err)
	}
	markFailed(history.RolledBack, fmt.Sprintf("rolled back to %d", prev.Number))
	return fmt.Errorf("install failed, and --atomic restored revision %s to record %d (profile %s), which is installed and ready; what failed: %w",
		rev, prev.Number, prev.Profile, cause)
}

// rollback re-resolves target's spec with this istioctl, installs it (pruning what newer
// installs added) and records the run as a rollback of target.
func (p *applier) rollback(ctx context.Context, target *history.Record, note string) error {
	res, manifests, err := renderRecord(target, p.errOut)
	if err != nil {
		return err
	}
	rec := &history.Record{Action: history.ActionRollback, RollbackOf: target.Number}
	return p.run(ctx, res, manifests, rec, fmt.Sprintf("rollback to %d%s", target.Number, note))
}

// renderRecord resolves a record's spec with this istioctl (its profiles and charts) and
// renders it.
func renderRecord(r *history.Record, errOut io.Writer) (*spec.Resolved, []render.Manifest, error) {
	if strings.TrimSpace(r.Spec) == "" {
		return nil, nil, fmt.Errorf("install record %d of revision %s holds no spec", r.Number, r.Revision)
	}
	f := SpecFlags{Files: []string{"-"}}
	res, manifests, err := f.render(strings.NewReader(r.Spec), errOut, "", false)
	if err != nil {
		return nil, nil, fmt.Errorf("the spec of install record %d of revision %s does not resolve with istioctl %s: %w", r.Number, r.Revision, version.Version, err)
	}
	if history.Rev(res.IOP.Spec.Revision) != history.Rev(r.Revision) {
		return nil, nil, fmt.Errorf("the spec of install record %d names revision %s, not %s: the record was edited", r.Number, history.Rev(res.IOP.Spec.Revision), history.Rev(r.Revision))
	}
	return res, manifests, nil
}

func identities(manifests []render.Manifest) ([]history.ObjectRef, int) {
	var objs []*unstructured.Unstructured
	for _, m := range manifests {
		objs = append(objs, m.Objects...)
	}
	return history.Identities(objs)
}

// relabelDone marks the end of a rollback's install as such, so the printers do not say
// "Installation complete" after an install that failed.
type relabelDone struct {
	event.Sink
	status, what string
}

func (r relabelDone) Emit(e event.Event) {
	if e.Type == event.Done && e.Status == "" {
		e.Status = r.status
		if e.Error == "" {
			e.Message = r.what + ": " + e.Message
		} else {
			e.Message = r.what
		}
	}
	r.Sink.Emit(e)
}
