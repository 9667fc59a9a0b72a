package action

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/external"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/operator/tag"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// DefaultHistoryMax is how many install records of a revision are kept unless told otherwise.
const DefaultHistoryMax = history.DefaultMax

// Install resolves, renders and applies a spec: an install, or an upgrade of what is there.
type Install struct {
	*Config
	// Spec is what to install: profile, files, --set flags, revision.
	Spec spec.Options
	// DryRun applies with a server-side dry run: everything is checked, nothing written.
	DryRun bool
	// ReadinessTimeout bounds the whole run's wait for readiness.
	ReadinessTimeout time.Duration
	// HistoryMax is how many install records of the revision to keep (0: all).
	HistoryMax int
	// TakeOwnership adopts rendered objects that exist without istioctl's ownership.
	TakeOwnership bool
	// RetireHelmReleases retires, once the install succeeded, the Helm releases whose
	// objects it took over and that it left nothing of their own: it deletes their release
	// records (helm list no longer shows them, helm uninstall can no longer delete the
	// objects) and leaves the objects to this install.
	RetireHelmReleases bool
	// Atomic restores the previous successful install when this one fails (or, without
	// one, removes the revision's components again).
	Atomic bool
	// Replan says the plan Run is given was shown to someone and may be old: Run plans
	// again first and stops, writing nothing, when the new plan writes differently.
	Replan bool
	// Events receives the run's events; nil drops them.
	Events event.Sink

	// record is how the run is recorded, and what names it (a rollback sets them; a
	// rollback also does not check the pieces the spec relies on, as it never did).
	record     *history.Record
	what       string
	skipRelied bool
}

// InstallPlan is what an install will do, decided from the spec and what the cluster holds,
// before anything is written.
type InstallPlan struct {
	// Profile and Revision name what is installed ("default" for the default revision).
	Profile, Revision string
	// Namespace is the install's istio namespace.
	Namespace string
	// Objects and Components count what is applied.
	Objects, Components int
	// Foreign are the rendered objects that exist without istioctl's ownership; only with
	// TakeOwnership (without, Plan fails on them).
	Foreign []install.Foreign
	// Stale are the objects the install owns and no longer renders: pruned after the apply.
	Stale []string
	// SetsDefaultTag says the run points the default revision tag at the revision.
	SetsDefaultTag bool
	// HelmReleases are the Helm releases listing objects the install applies.
	HelmReleases []HelmRelease

	res        *spec.Resolved
	manifests  []render.Manifest
	client     *kube.Client
	installer  *install.Installer
	stale      []*unstructured.Unstructured
	defaultTag *tag.InstallDefault
	// records are the revision's install records before the run; unrecorded says the
	// revision is installed without any (Atomic only).
	records    []*history.Record
	recordsErr error
	unrecorded bool
	changes    []install.Change
	lock       planLock
}

// Changes foresees what the run does to each object: created, configured, unchanged (no
// write) or pruned, from the reads the plan already made.
func (p *InstallPlan) Changes(ctx context.Context) ([]install.Change, error) {
	if p.changes == nil {
		c, err := p.installer.Changes(ctx, p.manifests, p.stale)
		if err != nil {
			return nil, err
		}
		p.changes = c
	}
	return p.changes, nil
}

// Summary says what the run will do, per component, from the reads the plan made (no
// request): created, updated, unchanged, pruned, and the default revision tag's step. With
// fields, a server-side dry run of each object to update says which of its fields change
// (one read and one dry-run request each: for a person about to confirm, or -v).
func (p *InstallPlan) Summary(ctx context.Context, fields bool) (*install.Summary, error) {
	changes, err := p.Changes(ctx)
	if err != nil {
		return nil, err
	}
	if fields {
		// A copy: the plan's changes are what a replan compares with.
		changes = append([]install.Change(nil), changes...)
		if err := p.installer.UpdatedFields(ctx, p.manifests, changes); err != nil {
			return nil, err
		}
	}
	s := install.Summarize(p.manifests, changes)
	if p.SetsDefaultTag {
		s.DefaultTag = &install.TagStep{Revision: p.defaultTag.Revision, From: p.defaultTag.Current}
	}
	return s, nil
}

// InstallResult is what a run did.
type InstallResult struct {
	Applied, Unchanged, Pruned int
	// Changes are what happened to each object (the counts derive from them).
	Changes []install.Change
	// Record is the number of the install record the run wrote (0: none, e.g. a dry run).
	Record int
}

func (a *Install) events() event.Sink {
	if a.Events == nil {
		return event.Discard{}
	}
	return event.Stamped(a.Events)
}

// Plan resolves and renders the spec and reads what the run depends on: the pieces it
// relies on (an error, unless Force, when they are not as it needs them; a warning event for
// each lesser problem and a check event for each that passed), who owns the objects it
// would apply (an error for objects istioctl did not install, unless TakeOwnership: then a
// warning each), whether it sets the default revision tag, and what it would prune. It
// writes nothing.
//
// It also reads the cluster lock: a warning event says so when another writer holds it, and
// the plan keeps the Lease's version, so that Run, once it holds the lock, knows whether
// another writer ran since (it then plans again).
func (a *Install) Plan(ctx context.Context) (*InstallPlan, error) {
	events := a.events()
	p, err := a.plan(ctx, events)
	if err == nil {
		p.lock = a.planLockState(ctx, p.client, events, a.DryRun)
	}
	return p, stoppedEarly(ctx, err)
}

// stoppedEarly is the error of an install stopped before the engine's safe points could
// report (while resolving, rendering, connecting or applying nothing yet): nothing was
// applied.
func stoppedEarly(ctx context.Context, err error) error {
	var interrupted *install.InterruptedError
	if ctx.Err() != nil && err != nil && !errors.As(err, &interrupted) {
		return fmt.Errorf("interrupted before any component was applied: %w; run the same install again", context.Canceled)
	}
	return err
}

func (a *Install) plan(ctx context.Context, events event.Sink) (*InstallPlan, error) {
	res, manifests, err := a.render(a.Spec, false)
	if err != nil {
		return nil, err
	}
	return a.planFor(ctx, res, manifests, events)
}

// planFor plans the install of an already rendered spec.
func (a *Install) planFor(ctx context.Context, res *spec.Resolved, manifests []render.Manifest, events event.Sink) (*InstallPlan, error) {
	client, err := a.connect(ctx)
	if err != nil {
		return nil, err
	}
	if !a.skipRelied {
		if err := a.checkRelied(ctx, client, res, manifests, events); err != nil {
			return nil, err
		}
	}
	owner := ownerOf(res)
	p := &InstallPlan{Profile: res.Profile, Revision: owner.Rev(), Namespace: owner.Namespace, Components: len(manifests),
		res: res, manifests: manifests, client: client}
	for _, m := range manifests {
		p.Objects += len(m.Objects)
	}
	// A history that cannot be read does not stop the install (the run says so): the
	// records only name the operation and spare a repeated record.
	p.records, p.recordsErr = (&history.Store{Client: client, Namespace: recordNamespace(res)}).List(ctx, owner.Rev())
	if a.Atomic && !a.DryRun && len(p.records) == 0 && p.recordsErr == nil {
		if p.unrecorded, err = installedWithoutRecords(ctx, client, res); err != nil {
			return nil, err
		}
	}
	// The default revision tag (upstream's install step): decided before the install, which
	// may then apply the default revision's injector deactivated; set once it succeeded,
	// before its done event.
	if p.defaultTag, err = tag.ForInstall(ctx, client, res, manifests, tagLabels(owner)); err != nil {
		return nil, err
	}
	p.SetsDefaultTag = p.defaultTag.Needed && !a.DryRun
	p.installer = &install.Installer{
		Client:        client,
		Owner:         owner,
		Opts:          install.Options{DryRun: a.DryRun, Timeout: a.ReadinessTimeout},
		NamespaceMeta: namespaceMeta(res),
	}
	if p.Foreign, err = a.checkOwnership(ctx, p.installer, manifests); err != nil {
		return nil, err // nothing written, nothing to record
	}
	if err := a.planHelm(ctx, p); err != nil {
		return nil, err
	}
	if p.stale, err = p.installer.Stale(ctx, manifests); err != nil {
		return nil, err
	}
	for _, o := range p.stale {
		p.Stale = append(p.Stale, kube.Describe(o))
	}
	return p, nil
}

// tagLabels are the labels of the default tag's objects an install sets: its own (so an
// uninstall of the revision, or a purge, removes them) and the opt-out of its prune.
func tagLabels(owner ownership.Owner) map[string]string {
	l := owner.Labels(component.Pilot)
	l[ownership.LabelNotPruned] = "true"
	return l
}

// Run carries out plan (nil: it plans first), holding the cluster lock (LockOptions) from
// before its first write to its end; a dry run takes no lock. Without a plan it resolves
// and renders first (a bad spec fails before any request), takes the lock, and plans
// under it: one set of reads. With a plan it plans again first, quietly, when Replan says
// the plan was shown to someone or when another writer held the lock since the plan was
// made, and returns a *PlanChangedError, writing nothing, when the new plan would write
// differently from plan: Run never writes from reads older than another writer's run. A
// failed run with Atomic restores the revision's previous successful install record,
// under the same lock.
func (a *Install) Run(ctx context.Context, plan *InstallPlan) (res *InstallResult, err error) {
	res, err = a.execute(ctx, plan)
	return res, stoppedEarly(ctx, err)
}

// execute is Run without the interrupt message (a rollback says its own).
func (a *Install) execute(ctx context.Context, plan *InstallPlan) (*InstallResult, error) {
	var err error
	if a.DryRun {
		if plan == nil {
			plan, err = a.Plan(ctx)
		} else if a.Replan {
			plan, err = a.replan(ctx, plan)
		}
		if err != nil {
			return nil, err
		}
		return a.carryOut(ctx, plan)
	}
	var res *spec.Resolved
	var manifests []render.Manifest
	if plan == nil {
		if res, manifests, err = a.render(a.Spec, false); err != nil {
			return nil, err
		}
	} else {
		res = plan.res
	}
	var out *InstallResult
	err = a.locked(ctx, a.events(), a.lockRun(res), func(ctx context.Context) error {
		var err error
		switch {
		case plan == nil:
			plan, err = a.planFor(ctx, res, manifests, a.events())
		case a.Replan || a.moved(plan.lock):
			plan, err = a.replan(ctx, plan)
		}
		if err != nil {
			return err
		}
		out, err = a.carryOut(ctx, plan)
		return err
	})
	return out, err
}

// lockRun is what an install (or a rollback's install) takes the lock for.
func (a *Install) lockRun(res *spec.Resolved) lockRun {
	action := history.ActionInstall
	if a.record != nil {
		action = a.record.Action
	}
	return lockRun{action: action, revision: history.Rev(res.IOP.Spec.Revision), namespace: recordNamespace(res), profile: res.Profile}
}

// carryOut runs a plan, records it and, when it failed with Atomic, restores.
func (a *Install) carryOut(ctx context.Context, plan *InstallPlan) (*InstallResult, error) {
	rec := a.record
	if rec == nil {
		rec = &history.Record{Action: history.ActionInstall}
	}
	what := a.what
	if what == "" {
		what = "install"
	}
	res, err := a.run(ctx, plan, rec, what)
	var notReady *install.NotReadyError
	var retireErr *retireError
	atomic := a.Atomic && !a.DryRun
	if errors.As(err, &notReady) && !atomic && ctx.Err() == nil && a.record == nil {
		err = fmt.Errorf("%w\nFix what the lines above name (or allow more time with --readiness-timeout), then run the same install again: it continues from what is applied", err)
	}
	if err == nil || !atomic || errors.As(err, &retireErr) {
		return res, err
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("%w (--atomic did not roll back: the run was interrupted)", err)
	}
	return res, a.restore(ctx, plan, rec, err)
}

// replan plans again, quietly, and compares with what was shown.
func (a *Install) replan(ctx context.Context, shown *InstallPlan) (*InstallPlan, error) {
	before, err := shown.Changes(ctx)
	if err != nil {
		return nil, err
	}
	// Planning may change the rendered objects (the default tag deactivates an injector), so
	// the new plan starts from a fresh render.
	r, err := render.NewRenderer(shown.res.IOP.Spec.InstallPackagePath)
	if err != nil {
		return nil, err
	}
	manifests, _, err := r.Render(shown.res)
	if err != nil {
		return nil, err
	}
	fresh, err := a.planFor(ctx, shown.res, manifests, event.Discard{})
	if err != nil {
		return nil, err
	}
	now, err := fresh.Changes(ctx)
	if err != nil {
		return nil, err
	}
	diff := changesDiff(before, now)
	if len(shown.Foreign) != len(fresh.Foreign) {
		diff = append(diff, fmt.Sprintf("objects not installed by istioctl: %d planned, %d now", len(shown.Foreign), len(fresh.Foreign)))
	}
	diff = append(diff, helmDiff(shown.HelmReleases, fresh.HelmReleases)...)
	if shown.SetsDefaultTag != fresh.SetsDefaultTag {
		diff = append(diff, fmt.Sprintf("sets the default revision tag: planned %v, now %v", shown.SetsDefaultTag, fresh.SetsDefaultTag))
	}
	if len(diff) > 0 {
		return nil, &PlanChangedError{Changes: diff}
	}
	return fresh, nil
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

// run applies the plan and, unless it is a dry run, records the run in rec (Action and
// RollbackOf set by the caller; what names the run in the record's description). A record
// that cannot be written is a warning: the install itself stands.
func (a *Install) run(ctx context.Context, p *InstallPlan, rec *history.Record, what string) (*InstallResult, error) {
	events := a.events()
	for _, f := range p.Foreign {
		msg := "adopted from " + f.Manager + ": this install now owns it (re-applies, prunes and uninstalls it)"
		events.Emit(event.Event{Type: event.Warning, Object: f.Object, Message: msg})
	}
	a.helmWarnings(p, events)
	start := event.Event{Type: event.Plan, Total: p.Objects, Message: fmt.Sprintf("%d objects in %d components", p.Objects, p.Components),
		SchemaVersion: event.SchemaVersion, Plan: install.PlanOf(p.manifests)}
	if a.DryRun {
		start.Status = "dry-run"
	}
	// The counts come from the metadata lists the plan read and the apply reuses: no
	// request. Should they fail, the apply fails on the same reads and says why.
	if s, err := p.Summary(ctx, false); err == nil {
		start.Changes = &s.Changes
	}
	events.Emit(start)
	if p.recordsErr != nil {
		events.Emit(event.Event{Type: event.Warning, Message: "the install history cannot be read, so this run is named an install and recorded anew: " + p.recordsErr.Error()})
	}
	p.installer.Events = events
	result, installErr := p.installer.Install(ctx, p.manifests, p.stale)
	if installErr == nil && !a.DryRun && p.defaultTag.Needed {
		var tagged []tag.Change
		tagged, installErr = p.defaultTag.Run(ctx, p.client, events)
		// The tag's objects are written by this run too: they count.
		for _, ch := range tagged {
			result.Changes = append(result.Changes, install.Change{Object: ch.Object, Component: tagComponent, Action: install.Action(ch.Action)})
		}
	}
	err := installErr
	if err == nil {
		// Only once the install stands: the releases' objects are now this install's.
		err = a.retireHelm(ctx, p, events)
	}
	if lost := lockLost(ctx); lost != nil {
		err = lost // it stopped the run: say so, not "interrupted"
	}
	events.Emit(a.doneEvent(result, err, rec, p.operation(rec)))
	out := &InstallResult{Applied: result.Applied(), Unchanged: result.Unchanged(), Pruned: result.Pruned(), Changes: result.Changes}
	if a.DryRun {
		return out, err
	}
	res := p.res
	rec.Revision = res.IOP.Spec.Revision
	rec.Time = time.Now().UTC()
	rec.ToolVersion = version.Version
	rec.Profile = res.Profile
	if y, derr := spec.Dump(res.Tree, "", spec.FormatYAML); derr == nil {
		rec.Spec = string(y)
	}
	rec.Objects, rec.ObjectsOmitted = identities(p.manifests)
	if a.held != nil {
		rec.Run = a.held.Identity()
	}
	if installErr != nil {
		rec.Outcome = history.Failed
		rec.SetDescription(what + " failed: " + installErr.Error())
	} else {
		rec.Outcome = history.Succeeded
		rec.SetDescription(fmt.Sprintf("%s complete (%d applied, %d unchanged, %d pruned)", what, out.Applied, out.Unchanged, out.Pruned))
	}
	// Recorded even when the run was interrupted: a fresh deadline for the write.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	store := &history.Store{Client: p.client, Namespace: recordNamespace(res)}
	if installErr == nil && out.Applied == 0 && out.Pruned == 0 {
		// A re-install that changed nothing repeats the last record: no new one.
		if records := p.records; history.Repeats(records, rec) {
			rec.Number = records[len(records)-1].Number
			out.Record = rec.Number
			return out, err
		}
	}
	if werr := store.Create(wctx, rec, a.HistoryMax); werr != nil {
		rec.Number = 0
		events.Emit(event.Event{Type: event.Warning, Message: "this run is not in the install history: " + werr.Error()})
	}
	out.Record = rec.Number
	return out, err
}

// tagComponent groups the default revision tag's objects in an install's summary, as an
// uninstall's summary groups them.
const tagComponent = "revision-tags"

// operation names the run for its done event: a rollback, an upgrade when the revision
// already had a successful install, an install otherwise.
func (p *InstallPlan) operation(rec *history.Record) string {
	if rec.Action == history.ActionRollback {
		return event.OperationRollback
	}
	if history.LastSucceeded(p.records) != nil {
		return event.OperationUpgrade
	}
	return event.OperationInstall
}

// doneEvent is the run's last event: what it did, or why it stopped.
func (a *Install) doneEvent(res *install.Result, err error, rec *history.Record, operation string) event.Event {
	// The code from the error itself: a default-tag step stopped by Ctrl-C is 130 though
	// its done is not an interrupted install's.
	e := event.Event{Type: event.Done, Operation: operation, ExitCode: event.Code(event.ExitCode(err))}
	var interrupted *install.InterruptedError
	switch {
	case errors.As(err, &interrupted):
		e.Status, e.Error = "interrupted", err.Error()
		return e
	case err != nil:
		e.Error = err.Error()
	case a.DryRun:
		e.Status = "dry-run"
		e.Message = fmt.Sprintf("%d would be applied, %d unchanged, %d would be pruned", res.Applied(), res.Unchanged(), res.Pruned())
		return e
	default:
		e.Message = fmt.Sprintf("%d applied, %d unchanged, %d pruned", res.Applied(), res.Unchanged(), res.Pruned())
	}
	if rec.Action == history.ActionRollback {
		// A rollback's end says so, so the printers do not say "Installation complete"
		// after an install that failed.
		e.Status = "rollback"
		if e.Error == "" {
			e.Message = fmt.Sprintf("record %d: %s", rec.RollbackOf, e.Message)
		} else {
			e.Message = fmt.Sprintf("record %d", rec.RollbackOf)
		}
	}
	return e
}

// checkRelied runs, before anything is written, the checks of what the spec relies on (an
// existing control plane, the CA, Prometheus): an error refuses the install unless Force,
// which turns it into a warning.
func (a *Install) checkRelied(ctx context.Context, client *kube.Client, res *spec.Resolved, manifests []render.Manifest, events event.Sink) error {
	env := &check.Env{Client: client, IstioNamespace: ownerOf(res).Namespace, Revision: res.IOP.Spec.Revision, Manifests: manifests}
	if err := withExternal(env, res); err != nil {
		return err
	}
	// Run even when the spec declares nothing: a cacerts Secret istiod would use is checked.
	rep := check.Run(ctx, "install", check.External(), env)
	var blocking []string
	for _, r := range rep.Results {
		switch {
		case r.Passed:
			if r.Severity != check.Info {
				events.Emit(event.Event{Type: event.Check, Object: r.Object, Message: r.Message})
			}
		case r.Severity == check.Error && !a.Spec.Force:
			blocking = append(blocking, fmt.Sprintf("✘ %s: %s\n    hint: %s", r.Object, r.Message, r.Hint))
		default:
			msg := r.Message
			if r.Severity == check.Error {
				msg += " (ignored because of --force)"
			}
			events.Emit(event.Event{Type: event.Warning, Object: r.Object, Message: msg})
		}
	}
	if len(blocking) > 0 {
		return fmt.Errorf("this install relies on pieces that are not as it needs them:\n  %s\nNothing was written. Fix them, or install anyway with --force",
			strings.Join(blocking, "\n  "))
	}
	return nil
}

// withExternal fills in what the checks need to know of what the spec relies on.
func withExternal(env *check.Env, res *spec.Resolved) error {
	d := external.FromSpec(res.IOP)
	if d.Empty() {
		return nil
	}
	env.External = d
	if d.Relies(component.Base) {
		r, err := render.NewRenderer(res.IOP.Spec.InstallPackagePath)
		if err != nil {
			return err
		}
		if env.BaseCRDs, err = r.BaseCRDNames(); err != nil {
			return err
		}
	}
	return nil
}

// checkOwnership is the ownership plan of a run: rendered objects that exist and that
// istioctl did not install (a Helm release's, ones made by hand) stop it, named with their
// managers, unless TakeOwnership adopts them (returned, for the run to warn about). It reads
// with the installer's metadata lists, which the apply then reuses.
func (a *Install) checkOwnership(ctx context.Context, in *install.Installer, manifests []render.Manifest) ([]install.Foreign, error) {
	foreign, err := in.ForeignObjects(ctx, manifests)
	if err != nil || len(foreign) == 0 {
		return nil, err
	}
	if !a.TakeOwnership {
		lines := make([]string, len(foreign))
		for i, f := range foreign {
			lines[i] = fmt.Sprintf("%s (managed by %s)", f.Object, f.Manager)
		}
		return nil, fmt.Errorf("%d object(s) this install would apply exist and were not installed by istioctl:\n  %s\n"+
			"Nothing was written. Leave them to their manager (an existing control plane: declare it in spec.external.controlPlane and disable those components), "+
			"delete them, or adopt them with --take-ownership", len(foreign), strings.Join(lines, "\n  "))
	}
	return foreign, nil
}

// namespaceMeta is what the install sets on the istio namespace, created or not: the
// network label istiod and the injector fall back to (values.global.network), and a
// remote's topology.istio.io/controlPlaneClusters (spec.external.remote.controlPlaneClusters).
func namespaceMeta(res *spec.Resolved) map[string]install.NamespaceMeta {
	var m install.NamespaceMeta
	if n, _ := spec.Lookup(res.IOP.Spec.Values, "global", "network"); n != nil && n != "" {
		m.Labels = map[string]string{spec.LabelNetwork: fmt.Sprint(n)}
	}
	if ext := res.IOP.Spec.External; ext != nil && ext.Remote != nil && ext.Remote.ControlPlaneClusters != "" {
		m.Annotations = map[string]string{v1alpha1.AnnotationControlPlaneClusters: ext.Remote.ControlPlaneClusters}
	}
	if m.Labels == nil && m.Annotations == nil {
		return nil
	}
	return map[string]install.NamespaceMeta{res.IOP.IstioNamespace(): m}
}
