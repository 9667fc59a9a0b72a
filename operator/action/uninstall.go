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
	"github.com/istioctl-installer/istioctl/operator/ownership"
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
	Events event.Sink
	// Planned, when set, is given the plan Run makes itself (Run without a plan), before
	// anything is removed, also when planning failed part-way: what a command shows.
	Planned func(*UninstallPlan)

	// owner, when set, is the install to remove instead of the one Spec resolves to;
	// componentsOnly removes just its components (no tags, records or warnings): what
	// install --atomic undoes.
	owner          *ownership.Owner
	componentsOnly bool
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

	links uninstallLinks

	installer *install.Installer
	targets   []*unstructured.Unstructured
	tags      []*unstructured.Unstructured
	lock      planLock
	recordNS  string
	specName  string
}

// Summary groups what the uninstall removes: per component, the revision tags, the install
// records; from the plan's reads (no request).
func (p *UninstallPlan) Summary() *install.Summary {
	return install.SummarizeRemoval(p.targets, func(o *unstructured.Unstructured) (string, string) {
		switch {
		case o.GetLabels()[history.LabelRecord] == "true":
			return "install-records", "Install records"
		case o.GetLabels()[tag.LabelTag] != "":
			return "revision-tags", "Revision tags"
		}
		return install.ComponentTitle(o)
	})
}

func (a *Uninstall) events() event.Sink { return event.Stamped(orDiscard(a.Events)) }

func (a *Uninstall) opts() install.UninstallOptions {
	return install.UninstallOptions{Purge: a.Purge, DryRun: a.DryRun, Timeout: a.Timeout}
}

// Plan finds what to remove, in removal order, and warns (events) about what the removal
// takes from workloads. A revision nothing carries the labels of is an error, unless Purge
// or IgnoreNotFound. It also reads the cluster lock, as Install.Plan does.
func (a *Uninstall) Plan(ctx context.Context) (*UninstallPlan, error) {
	events := a.events()
	owner, recordNS, specName, err := a.target()
	if err != nil {
		return nil, err
	}
	p, err := a.plan(ctx, events, owner, recordNS, specName)
	if err == nil {
		p.lock = a.planLockState(ctx, p.installer.Client, events, a.DryRun)
	}
	return p, err
}

// target is the install to remove, where its records are, and the cluster name its spec
// gives (resolved offline).
func (a *Uninstall) target() (ownership.Owner, string, string, error) {
	if a.owner != nil {
		return *a.owner, a.owner.Namespace, "", nil
	}
	res, err := a.resolve(a.Spec)
	if err != nil {
		return ownership.Owner{}, "", "", err
	}
	return ownerOf(res), recordNamespace(res), clusterName(res.IOP.Spec.Values), nil
}

func (a *Uninstall) plan(ctx context.Context, events event.Sink, owner ownership.Owner, recordNS, specName string) (*UninstallPlan, error) {
	client, err := a.connect(ctx)
	if err != nil {
		return nil, err
	}
	in := &install.Installer{Client: client, Owner: owner}
	p := &UninstallPlan{Revision: owner.Rev(), Namespace: owner.Namespace, Purge: a.Purge, installer: in, recordNS: recordNS, specName: specName}
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
	if !a.componentsOnly {
		p.Leave, p.tags = extra.leave, extra.tags
		p.targets = append(withTags(p.tags, p.targets), extra.records...)
	}
	for _, t := range p.targets {
		p.Targets = append(p.Targets, kube.Describe(t))
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
	if cps, err := client.ControlPlanes(ctx, p.Namespace); err == nil && len(cps) > 0 {
		var revs []string
		for _, cp := range cps {
			revs = append(revs, cp.Revision)
		}
		slices.Sort(revs)
		installed = strings.Join(slices.Compact(revs), ", ")
	}
	return fmt.Errorf("nothing to remove: no object carries the labels of %s (control plane revisions there: %s); check -r, -f and -i, or pass --ignore-not-found", what, installed)
}

// Run removes what plan lists (nil: it plans first) and waits until it is gone, holding the
// cluster lock as Install.Run does (a dry run takes none). With Replan, or when another
// writer held the lock since the plan was made, it plans again first, quietly, and returns
// a *PlanChangedError, removing nothing, when the new plan removes other objects.
func (a *Uninstall) Run(ctx context.Context, plan *UninstallPlan) error {
	events := a.events()
	var owner ownership.Owner
	var recordNS, specName string
	var err error
	if plan != nil {
		owner, recordNS, specName = plan.installer.Owner, plan.recordNS, plan.specName
	} else if owner, recordNS, specName, err = a.target(); err != nil {
		return err
	}
	if a.DryRun {
		if plan == nil {
			plan, err = a.plan(ctx, events, owner, recordNS, specName)
			if err == nil {
				plan.lock = a.planLockState(ctx, plan.installer.Client, events, true) // its warning
			}
			a.planned(plan)
			if err != nil {
				return err
			}
		}
		return a.remove(ctx, plan)
	}
	run := lockRun{action: "uninstall", revision: owner.Rev(), namespace: owner.Namespace}
	if a.Purge {
		run.revision = ""
	}
	return a.locked(ctx, events, run, func(ctx context.Context) error {
		switch {
		case plan == nil:
			var err error
			plan, err = a.plan(ctx, events, owner, recordNS, specName)
			a.planned(plan)
			if err != nil {
				return err
			}
		case a.Replan || a.moved(plan.lock):
			fresh, err := a.plan(ctx, event.Discard{}, owner, recordNS, specName)
			if err != nil {
				return err
			}
			if diff := targetsDiff(plan.Targets, fresh.Targets); len(diff) > 0 {
				return &PlanChangedError{Changes: diff}
			}
			plan = fresh
		}
		return a.remove(ctx, plan)
	})
}

func (a *Uninstall) planned(p *UninstallPlan) {
	if p != nil && a.Planned != nil {
		a.Planned(p)
	}
}

// remove carries out a plan.
func (a *Uninstall) remove(ctx context.Context, plan *UninstallPlan) error {
	if len(plan.targets) == 0 && !a.componentsOnly {
		return nil
	}
	events := a.events()
	for _, t := range plan.tags {
		if !a.Purge && t.GetKind() == "MutatingWebhookConfiguration" && t.GetLabels()[tag.LabelTag] == tag.Default {
			events.Emit(event.Event{Type: event.Warning, Object: kube.Describe(t),
				Message: fmt.Sprintf("the default revision tag points at revision %q and goes with it: namespaces labelled istio-injection=enabled are not injected until 'istioctl tag set default --revision <revision>'", plan.Revision)})
		}
	}
	plan.installer.Events = events
	_, err := plan.installer.Uninstall(ctx, plan.targets, a.opts())
	if err == nil {
		err = a.removeLinks(ctx, plan.links, events)
	}
	if lost := lockLost(ctx); lost != nil {
		err = lost
	}
	done := event.Event{Type: event.Done, Status: "uninstall", Message: fmt.Sprintf("%d removed", len(plan.Targets))}
	var stopped *install.StoppedError
	switch {
	case errors.As(err, &stopped):
		done = event.Event{Type: event.Done, Status: "interrupted", Error: err.Error()}
	case err != nil:
		done = event.Event{Type: event.Done, Error: err.Error()}
	case a.DryRun:
		done.Status, done.Message = "dry-run", fmt.Sprintf("%d would be removed", len(plan.Targets))
	}
	done.Operation = event.OperationUninstall
	events.Emit(done)
	return err
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
	seen := map[string]bool{}
	out := append([]*unstructured.Unstructured{}, tags...)
	for _, t := range tags {
		seen[t.GroupVersionKind().GroupKind().String()+"/"+kube.Describe(t)] = true
	}
	for _, t := range targets {
		if !seen[t.GroupVersionKind().GroupKind().String()+"/"+kube.Describe(t)] {
			out = append(out, t)
		}
	}
	return out
}
