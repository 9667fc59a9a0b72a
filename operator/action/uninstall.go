package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/revision"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/operator/tag"
)

// Uninstall removes what an install labelled as its own: one revision's control plane and
// gateways (the revision in Spec, by -r, -f or --set), or with Purge every revision and the
// CRDs.
type Uninstall struct {
	*Config
	Spec           spec.Options
	Purge          bool
	DryRun         bool
	IgnoreNotFound bool
	// Timeout bounds the wait for the removed objects to be gone.
	Timeout time.Duration
	// RemoteContexts are kubeconfig contexts of other clusters: the link Secrets there that
	// point at this cluster are removed too (upstream's analyze names the flag).
	RemoteContexts []string
	// Replan: see Install.Replan.
	Replan bool
	// Events receives the run's events, its plan first; nil drops them.
	Events event.Sink

	// owner, when set, is the install to remove instead of the one Spec resolves to;
	// componentsOnly removes just its components (no tags, records or warnings): what
	// install --atomic undoes.
	owner          *ownership.Owner
	componentsOnly bool
	// spare is what existed before the failed install whose --atomic restore this is:
	// never removed.
	spare *install.Snapshot
}

// UninstallPlan is what an uninstall removes.
type UninstallPlan struct {
	// Revision is the revision removed ("default" for the default one); Namespace its
	// istio namespace.
	Revision, Namespace string
	Purge               bool
	// Targets are the objects removed, Kind/namespace/name, in removal order.
	Targets []string
	// Leave names the components the spec relies on and does not install: they, the
	// revision's tags and its install records stay.
	Leave []string
	// Nothing, when there is nothing to remove and that is not an error (a purge, or
	// IgnoreNotFound), says so.
	Nothing string
	// Remote are the link Secrets in RemoteContexts that point at this cluster (also in
	// Targets, with their context), removed after the uninstall.
	Remote []RemoteLink

	planned
	links  uninstallLinks
	target uninstallTarget
	// apply is the removal's run: the watch caches a purge's plan starts.
	apply   *install.Run
	targets []*unstructured.Unstructured
	tags    []*unstructured.Unstructured
}

// uninstallTarget is the install an uninstall removes, where its records are, and the
// cluster name its spec gives: known offline, before any request.
type uninstallTarget struct {
	owner              ownership.Owner
	recordNS, specName string
}

// Summary groups what the uninstall removes: per component, the revision tags, the install
// records; from the plan's reads (no request).
func (p *UninstallPlan) Summary() *install.Summary {
	return install.SummarizeRemoval(p.targets, func(o *unstructured.Unstructured) (string, string) {
		switch {
		case o.GetLabels()[history.LabelRecord] == "true":
			return "install-records", "Install records"
		case o.GetLabels()[tag.LabelTag] != "":
			return tagGroup, tagGroupTitle
		}
		return install.ComponentTitle(o)
	})
}

func (a *Uninstall) opts() install.UninstallOptions {
	return install.UninstallOptions{Purge: a.Purge, DryRun: a.DryRun, Timeout: a.Timeout}
}

// Plan finds what to remove, in removal order, and warns (events) about what the removal
// takes from workloads. A revision nothing carries the labels of is an error, unless Purge
// or IgnoreNotFound. It also reads the cluster lock, as Install.Plan does.
func (a *Uninstall) Plan(ctx context.Context) (*UninstallPlan, error) {
	t, err := a.target()
	if err != nil {
		return nil, err
	}
	r, err := a.planning(ctx, a.Events, a.DryRun)
	if err != nil {
		return nil, err
	}
	p, err := a.plan(ctx, r, t)
	if err == nil {
		p.lock = r.planLockState(ctx)
	}
	return p, err
}

// target is the install to remove, where its records are, and the cluster name its spec
// gives (resolved offline).
func (a *Uninstall) target() (uninstallTarget, error) {
	if a.owner != nil {
		return uninstallTarget{owner: *a.owner, recordNS: a.owner.Namespace}, nil
	}
	res, err := a.resolve(a.Spec)
	if err != nil {
		return uninstallTarget{}, err
	}
	return uninstallTarget{owner: a.ownerOf(res), recordNS: recordNamespace(res), specName: link.OwnName(link.NameSources{Values: res.IOP.Spec.Values})}, nil
}

func (a *Uninstall) plan(ctx context.Context, r *run, t uninstallTarget) (*UninstallPlan, error) {
	client, events, owner, recordNS, specName := r.client, r.events, t.owner, t.recordNS, t.specName
	var err error
	in := (&install.Installer{Client: client, Owner: owner}).Start()
	p := &UninstallPlan{Revision: owner.Rev(), Namespace: owner.Namespace, Purge: a.Purge, planned: planned{client: client}, target: t, apply: in}
	// The tags and records are looked up beside the targets: their lists need only the owner.
	var extra tagsAndRecords
	var extraErr error
	var looked sync.WaitGroup
	if !a.componentsOnly {
		looked.Go(func() { extra, extraErr = a.tagsAndRecords(ctx, client, owner, recordNS) })
	}
	p.targets, err = in.Targets(ctx, a.opts())
	looked.Wait()
	if err != nil {
		return nil, err
	}
	if extraErr != nil {
		return nil, extraErr
	}
	p.targets = a.spare.Without(p.targets)
	if !a.componentsOnly {
		p.Leave, p.tags = extra.leave, extra.tags
		p.targets = append(withTags(p.tags, p.targets), extra.records...)
	}
	for _, t := range p.targets {
		p.Targets = append(p.Targets, ref.Of(t).String())
	}
	if len(p.targets) == 0 {
		return p, a.nothingToRemove(ctx, client, p)
	}
	if a.componentsOnly {
		return p, nil
	}
	if err := a.planLinks(ctx, client, p, specName, events); err != nil {
		return nil, err
	}
	if a.Purge && (a.Spec.Revision != "" || len(a.Spec.Files) > 0 || len(a.Spec.Sets) > 0) {
		events.Emit(event.Event{Type: event.Warning, Message: "--purge removes every revision and the Istio CRDs: -r, -f and --set are ignored"})
	}
	warnings, err := in.UninstallWarnings(ctx, p.targets, a.opts())
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		events.Emit(w)
	}
	return p, nil
}

// tagsAndRecords is what an uninstall removes beside the targets (tags first, records
// last), or the components a spec leaves alone.
type tagsAndRecords struct {
	tags, records []*unstructured.Unstructured
	leave         []string
}

// tagsAndRecords finds the revision's tags and install records; a spec that relies on
// components it does not install (gateways next to an existing istiod) removes only its
// own objects: the revision's tags and install records belong to the control plane it
// leaves alone.
func (a *Uninstall) tagsAndRecords(ctx context.Context, client *kube.Client, owner ownership.Owner, recordNS string) (tagsAndRecords, error) {
	var out tagsAndRecords
	if !a.Purge && len(owner.Leave) > 0 {
		for _, c := range owner.Leave {
			out.leave = append(out.leave, string(c))
		}
		return out, nil
	}
	// The revision tags pointing at the revision (every tag, with Purge) go first: an
	// injector left calling a removed control plane would fail every pod it selects.
	var err error
	if out.tags, err = tag.UninstallTargets(ctx, client, owner.Namespace, owner.Rev(), a.Purge); err != nil {
		return out, err
	}
	// The revision's install records go with it (every record with Purge), last: a later
	// rollback or install --atomic must not bring back what was removed on purpose.
	recordsOf := owner.Rev()
	if a.Purge {
		recordsOf = ""
	}
	out.records, err = (&history.Store{Client: client, Namespace: recordNS}).Secrets(ctx, recordsOf)
	return out, err
}

// nothingToRemove is what an uninstall that found no target says. A purge, or an uninstall
// told IgnoreNotFound, has nothing left to do; naming a revision that is not there is an
// error, as kubectl delete and helm uninstall of a missing object are: a typo must not pass
// for a removal.
func (a *Uninstall) nothingToRemove(ctx context.Context, client *kube.Client, p *UninstallPlan) error {
	if a.Purge {
		p.Nothing = "Nothing to remove: no object carries an istioctl install's labels."
		return nil
	}
	what := fmt.Sprintf("revision %q in namespace %s", p.Revision, p.Namespace)
	if a.IgnoreNotFound || a.componentsOnly {
		p.Nothing = fmt.Sprintf("Nothing to remove: no object carries the labels of %s.", what)
		return nil
	}
	installed := "none"
	if cps, err := revision.ControlPlanes(ctx, client, p.Namespace); err == nil && len(cps) > 0 {
		var revs []string
		for _, cp := range cps {
			revs = append(revs, cp.Revision)
		}
		slices.Sort(revs)
		installed = strings.Join(slices.Compact(revs), ", ")
	}
	return fmt.Errorf("nothing to remove: no object carries the labels of %s (control plane revisions there: %s); check -r, -f and -i, or pass --ignore-not-found", what, installed)
}

// Run removes what plan lists (nil: it plans first) and waits until it is gone, by the
// plan-then-write protocol as Install.Run (a dry run takes no lock), its plan event first.
// With Replan, or when another writer held the lock since the plan was made, it plans
// again first, quietly, and returns a *PlanChangedError, removing nothing, when the new
// plan removes other objects. It returns the plan it carried out: one whose Nothing is set
// removed nothing and emitted no event.
func (a *Uninstall) Run(ctx context.Context, plan *UninstallPlan) (*UninstallPlan, error) {
	var t uninstallTarget
	var err error
	if plan != nil {
		t = plan.target
	} else if t, err = a.target(); err != nil {
		return nil, err
	}
	r, err := a.start(stateOf(plan), a.Events, a.DryRun)
	if err != nil {
		return nil, err
	}
	return a.steps(t).execute(ctx, r, plan, a.Replan)
}

// steps are an uninstall's steps of the protocol, removing t.
func (a *Uninstall) steps(t uninstallTarget) protocol[*UninstallPlan, *UninstallPlan] {
	return protocol[*UninstallPlan, *UninstallPlan]{
		lock: func(*UninstallPlan) lockRun {
			what := lockRun{action: "uninstall", revision: t.owner.Rev(), namespace: t.owner.Namespace}
			if a.Purge {
				what.revision = ""
			}
			return what
		},
		plan: func(ctx context.Context, r *run) (*UninstallPlan, error) { return a.plan(ctx, r, t) },
		replan: func(ctx context.Context, r *run, shown *UninstallPlan) (*UninstallPlan, []string, error) {
			fresh, err := a.plan(ctx, r, t)
			if err != nil {
				return nil, nil, err
			}
			return fresh, targetsDiff(shown.Targets, fresh.Targets), nil
		},
		idle:     func(p *UninstallPlan) bool { return len(p.targets) == 0 && !a.componentsOnly },
		announce: a.announce,
		carryOut: a.remove,
		done:     a.doneEvent,
	}
}

// announce is the uninstall's plan event: what it removes, per component, and what it
// leaves alone because the spec relies on it.
func (a *Uninstall) announce(_ context.Context, r *run, p *UninstallPlan) {
	s := p.Summary()
	r.events.Emit(event.Event{Type: event.Plan, Message: fmt.Sprintf("%d objects to remove", len(p.Targets)), DryRun: a.DryRun,
		PlanDetail: event.PlanDetail{SchemaVersion: event.SchemaVersion, Changes: &s.Changes, Leave: p.Leave}})
}

// remove carries out a plan.
func (a *Uninstall) remove(ctx context.Context, r *run, plan *UninstallPlan) (*UninstallPlan, error) {
	for _, t := range plan.tags {
		if !a.Purge && t.GetKind() == "MutatingWebhookConfiguration" && t.GetLabels()[tag.LabelTag] == tag.Default {
			r.events.Emit(event.Event{Type: event.Warning, Object: ref.Of(t).String(),
				Message: fmt.Sprintf("the default revision tag points at revision %q and goes with it: namespaces labelled istio-injection=enabled are not injected until 'istioctl tag set default --revision <revision>'", plan.Revision)})
		}
	}
	_, err := plan.apply.Uninstall(ctx, r.events, plan.targets, a.opts())
	if err == nil {
		err = a.removeLinks(ctx, plan.links, r.events)
	}
	return plan, err
}

// doneEvent is the uninstall's last event.
func (a *Uninstall) doneEvent(plan *UninstallPlan, _ *UninstallPlan, err error) event.Event {
	e := event.Event{RunEnd: event.RunEnd{Operation: event.OperationUninstall}}
	var stopped *install.StoppedError
	switch {
	case errors.As(err, &stopped):
		e.Result = event.RunInterrupted
	case err != nil:
	case a.DryRun:
		e.Message = fmt.Sprintf("%d would be removed", len(plan.Targets))
	default:
		e.Message = fmt.Sprintf("%d removed", len(plan.Targets))
	}
	return e
}

// targetsDiff says how two target lists differ.
func targetsDiff(before, now []string) []string {
	var out []string
	for _, t := range now {
		if !slices.Contains(before, t) {
			out = append(out, t+": not planned, now removed")
		}
	}
	for _, t := range before {
		if !slices.Contains(now, t) {
			out = append(out, t+": planned, now gone")
		}
	}
	return out
}

// withTags puts the tag objects first, then the other targets that are not among them.
func withTags(tags, targets []*unstructured.Unstructured) []*unstructured.Unstructured {
	seen := map[ref.Ref]bool{}
	out := append([]*unstructured.Unstructured{}, tags...)
	for _, t := range tags {
		seen[ref.Of(t)] = true
	}
	for _, t := range targets {
		if !seen[ref.Of(t)] {
			out = append(out, t)
		}
	}
	return out
}
