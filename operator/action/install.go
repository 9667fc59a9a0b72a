package action

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/images"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/schedule"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/operator/tag"
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
	// SkipAdmissionCheck leaves out the plan's admission dry runs and its look for the
	// ConfigMaps and Secrets the workloads need (check.Admission); a refusal then shows in
	// the wait.
	SkipAdmissionCheck bool
	// NodeBatch is how many nodes an upgrade replaces the pods of a node DaemonSet (CNI,
	// ztunnel) on at a time (0: 1).
	NodeBatch int
	// Atomic restores the previous successful install when this one fails (or, without
	// one, removes the revision's components again).
	Atomic bool
	// PinDigests resolves each image to its digest at the registry it is pulled from (or
	// takes the digest the revision's last successful install record kept) and applies
	// name:tag@digest, the injected proxy included; the record keeps the digests.
	PinDigests bool
	// Replan says the plan Run is given was shown to someone and may be old: Run plans
	// again first and stops, writing nothing, when the new plan writes differently.
	Replan bool
	// Events receives the run's events; nil drops them.
	Events event.Sink
	// Hooks, when given, are where the run reports each component ready (its hook, by the
	// component's name, ends): what a run beside it waits on (a fleet's remote, on its
	// primary's Pilot); a view made with After adds what its components wait on besides
	// their parents. nil: the run's own.
	Hooks *schedule.Hooks

	// rollbackOf, what and skipRelied say how a rollback's install is recorded and named
	// (a rollback also does not check the pieces the spec relies on, as it never did, nor
	// admission: it puts back what was installed, as far as the cluster lets it).
	rollbackOf int
	what       string
	skipRelied bool
	// spare, when set, is what existed before a failed run that this one (its --atomic
	// restore) must not prune.
	spare *install.Snapshot
}

// givesBack says a failed run gives back what it adopted (--take-ownership with --atomic):
// it snapshots what exists before its first write.
func (a *Install) givesBack() bool { return a.TakeOwnership && a.Atomic && !a.DryRun }

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
	Foreign []ownership.Foreign
	// Stale are the objects the install owns and no longer renders: pruned after the apply.
	Stale []string
	// SetsDefaultTag says the run points the default revision tag at the revision.
	SetsDefaultTag bool
	// HelmReleases are the Helm releases listing objects the install applies.
	HelmReleases []HelmRelease

	planned
	res       *spec.Resolved
	manifests []render.Manifest
	// apply is the install's run: the metadata lists the plan read, which the apply reuses.
	apply      *install.Run
	stale      []*unstructured.Unstructured
	defaultTag *tag.InstallDefault
	// records are the revision's install records before the run; unrecorded says the
	// revision is installed without any (Atomic only).
	records    []*history.Record
	recordsErr error
	// digests are the images' pinned digests (PinDigests), for the record.
	digests    map[string]string
	unrecorded bool
	changes    []install.Change
}

// Changes foresees what the run does to each object: created, configured, unchanged (no
// write) or pruned, from the reads the plan already made; and what setting the default
// revision tag does to its objects, so that the plan counts what the run's result counts.
func (p *InstallPlan) Changes(ctx context.Context) ([]install.Change, error) {
	if p.changes == nil {
		c, err := p.apply.Changes(ctx, p.manifests, p.stale)
		if err != nil {
			return nil, err
		}
		if p.SetsDefaultTag {
			t, err := p.defaultTag.Foresee(ctx, p.client)
			if err != nil {
				return nil, err
			}
			tc, err := p.apply.ChangesOf(ctx, t.Objects, tagGroup)
			if err != nil {
				return nil, err
			}
			c = append(c, tc...)
			for _, w := range t.Deactivate {
				c = append(c, install.Change{Object: ref.Of(w).String(), Component: tagGroup, Action: install.Deactivated, DryRun: true})
			}
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
		if err := p.apply.UpdatedFields(ctx, p.manifests, changes); err != nil {
			return nil, err
		}
	}
	s := tagSummary(install.Summarize(p.manifests, changes))
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

	// record is the run's install record; installErr what stopped the install itself (not
	// the Helm releases' retirement after it); before what existed before its first write
	// (givesBack only).
	record     *history.Record
	installErr error
	before     *install.Snapshot
}

// Plan resolves and renders the spec and reads what the run depends on: the pieces it
// relies on (an error, unless Force, when they are not as it needs them; a warning event for
// each lesser problem and a check event for each that passed), who owns the objects it
// would apply (an error for objects istioctl did not install, unless TakeOwnership: then a
// warning each), whether it sets the default revision tag, what it would prune, and, unless
// SkipAdmissionCheck, whether the cluster admits what it would write (precheck's
// check.Admission by server-side dry runs: an error unless Force). It writes nothing.
//
// It also reads the cluster lock: a warning event says so when another writer holds it, and
// the plan keeps the Lease's version, so that Run, once it holds the lock, knows whether
// another writer ran since (it then plans again).
func (a *Install) Plan(ctx context.Context) (*InstallPlan, error) {
	res, manifests, err := a.render(a.Spec, false)
	if err != nil {
		return nil, stoppedEarly(ctx, err)
	}
	r, err := a.planning(ctx, a.Events, a.DryRun)
	if err != nil {
		return nil, stoppedEarly(ctx, err)
	}
	p, err := a.planFor(ctx, r, res, manifests)
	if err == nil {
		p.lock = r.planLockState(ctx)
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

// planFor plans the install of an already rendered spec, reading through r's client.
func (a *Install) planFor(ctx context.Context, r *run, res *spec.Resolved, manifests []render.Manifest) (*InstallPlan, error) {
	client := r.client
	if !a.skipRelied {
		if err := a.checkRelied(ctx, a.checkEnv(client, res, manifests), res, r.events); err != nil {
			return nil, err
		}
	}
	owner := a.ownerOf(res)
	var err error
	p := &InstallPlan{Profile: res.Profile, Revision: owner.Rev(), Namespace: owner.Namespace, Components: len(manifests),
		planned: planned{client: client}, res: res, manifests: manifests}
	for _, m := range manifests {
		p.Objects += len(m.Objects)
	}
	// A history that cannot be read does not stop the install (the run says so): the
	// records only name the operation and spare a repeated record.
	p.records, p.recordsErr = (&history.Store{Client: client, Namespace: recordNamespace(res)}).List(ctx, owner.Rev())
	if a.PinDigests {
		if p.digests, err = pinDigests(ctx, res, manifests, pinSource(history.LastSucceeded(p.records), r.events)); err != nil {
			return nil, err
		}
	} else if list, lerr := images.FromManifests(res.Tree, manifests); lerr == nil {
		// Manifests pinned already (a rollback's, from its record): the record keeps them.
		p.digests = images.Digests(list)
	}
	if a.Atomic && !a.DryRun && len(p.records) == 0 && p.recordsErr == nil {
		if p.unrecorded, err = installedWithoutRecords(ctx, client, a.ownerOf(res)); err != nil {
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
	p.apply = (&install.Installer{
		Client: client,
		Owner:  owner,
		Opts: install.Options{DryRun: a.DryRun, Timeout: a.ReadinessTimeout,
			Upgrade: p.upgrades(a.action()), NodeBatch: a.NodeBatch},
		NamespaceMeta: namespaceMeta(res),
	}).Start()
	if p.Foreign, err = a.checkOwnership(ctx, p.apply, manifests); err != nil {
		return nil, err // nothing written, nothing to record
	}
	// The hop, once the objects are known to be the install's (or adopted).
	if p.upgrades(a.action()) && !a.skipRelied {
		if err := a.checkHop(ctx, client, owner, r.cfg.Version, r.events); err != nil {
			return nil, err
		}
	}
	if err := a.planHelm(ctx, p); err != nil {
		return nil, err
	}
	if p.stale, err = p.apply.Stale(ctx, manifests); err != nil {
		return nil, err
	}
	p.stale = a.spare.Without(p.stale)
	for _, o := range p.stale {
		p.Stale = append(p.Stale, ref.Of(o).String())
	}
	if !a.skipRelied && !a.SkipAdmissionCheck {
		// Of what the run writes only: an object it leaves unchanged is not sent.
		changes, err := p.Changes(ctx)
		if err != nil {
			return nil, err
		}
		if err := a.checkAdmission(ctx, a.checkEnv(client, res, install.Writing(manifests, changes)), r.events); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Run carries out plan (nil: it plans first) by the plan-then-write protocol (protocol.go),
// holding the cluster lock (LockOptions) from before its first write to its end; a dry run
// takes no lock. Without a plan it resolves and renders first (a bad spec fails before any
// request), takes the lock, and plans under it: one set of reads. With a plan it plans
// again first, quietly, when Replan says the plan was shown to someone or when another
// writer held the lock since the plan was made, and returns a *PlanChangedError, writing
// nothing, when the new plan would write differently from plan: Run never writes from
// reads older than another writer's run. A failed run with Atomic restores the revision's
// previous successful install record, under the same lock.
func (a *Install) Run(ctx context.Context, plan *InstallPlan) (*InstallResult, error) {
	res, err := a.execute(ctx, plan)
	return res, stoppedEarly(ctx, err)
}

// execute is Run without the interrupt message (a rollback says its own).
func (a *Install) execute(ctx context.Context, plan *InstallPlan) (*InstallResult, error) {
	steps := a.steps()
	if plan == nil {
		// The spec is resolved and rendered before any request: a bad one fails first.
		res, manifests, err := a.render(a.Spec, false)
		if err != nil {
			return nil, err
		}
		steps.lock = func(*InstallPlan) lockRun { return a.lockRun(res) }
		steps.plan = func(ctx context.Context, r *run) (*InstallPlan, error) { return a.planFor(ctx, r, res, manifests) }
	}
	r, err := a.start(stateOf(plan), a.Events, a.DryRun)
	if err != nil {
		return nil, err
	}
	return steps.execute(ctx, r, plan, a.Replan)
}

// steps are an install's steps of the protocol; a rollback's are the same around the
// record it re-installs.
func (a *Install) steps() protocol[*InstallPlan, *InstallResult] {
	return protocol[*InstallPlan, *InstallResult]{
		lock:     func(p *InstallPlan) lockRun { return a.lockRun(p.res) },
		replan:   a.replan,
		announce: a.announce,
		carryOut: a.carryOut,
		record:   a.recordRun,
		done:     a.doneEvent,
		after:    a.after,
	}
}

// action is what the install history calls the run.
func (a *Install) action() string {
	if a.rollbackOf > 0 {
		return history.ActionRollback
	}
	return history.ActionInstall
}

// lockRun is what an install (or a rollback's install) takes the lock for.
func (a *Install) lockRun(res *spec.Resolved) lockRun {
	return lockRun{action: a.action(), revision: history.Rev(res.IOP.Spec.Revision), namespace: recordNamespace(res), profile: res.Profile}
}

// tagLabels are the labels of the default tag's objects an install sets: its own (so an
// uninstall of the revision, or a purge, removes them) and the opt-out of its prune.
func tagLabels(owner ownership.Owner) map[string]string {
	l := owner.Labels(component.Pilot)
	l[ownership.LabelNotPruned] = "true"
	return l
}
