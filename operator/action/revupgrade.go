package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/migrate"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/revision"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/operator/tag"
)

// RevisionUpgrade is upgrade --strategy revision: the new revision installed beside the
// old one (as Install does), then the workloads moved to it by operator/migrate (tags,
// namespace labels, batches of restarts, each gated), the old revision removed on request
// once no pod uses it; or, with Rollback, the workloads of the run its progress record
// names returned to the old revision.
type RevisionUpgrade struct {
	*Config
	// Spec is the new revision's spec; its Revision is the new revision.
	Spec spec.Options
	// Migrate says what to move (From and To are decided by the plan).
	Migrate migrate.Options
	// Rollback returns the migrated workloads to the old revision instead.
	Rollback bool
	// PruneOld removes the old revision once no pod uses it.
	PruneOld bool
	DryRun   bool
	// ReadinessTimeout bounds the install's wait and each batch's.
	ReadinessTimeout   time.Duration
	HistoryMax         int
	SkipAdmissionCheck bool
	// Replan: see Install.Replan.
	Replan bool
	Events event.Sink
}

// MigrateOptions say what a revision upgrade moves (operator/migrate's, for the command
// layer, which reaches the engine only through this package).
type MigrateOptions = migrate.Options

// RevisionUpgradePlan is the move decided before anything is written.
type RevisionUpgradePlan struct {
	// From and To are the revisions, FromVersion and ToVersion their istiods' versions.
	From, To, FromVersion, ToVersion string
	// Install is the new revision's install (nil for a rollback).
	Install *InstallPlan
	// Migration is the tags, labels and batches.
	Migration *migrate.Plan
	planned
	record *migrate.Record
}

// Plan reads the cluster and decides (and reads the cluster lock, as Install.Plan does).
func (a *RevisionUpgrade) Plan(ctx context.Context) (*RevisionUpgradePlan, error) {
	r, err := a.planning(ctx, a.Events, a.DryRun)
	if err != nil {
		return nil, err
	}
	p, err := a.plan(ctx, r)
	if err == nil {
		p.lock = r.planLockState(ctx)
	}
	return p, err
}

func (a *RevisionUpgrade) install() *Install {
	return &Install{Config: a.Config, Spec: a.Spec, DryRun: a.DryRun, ReadinessTimeout: a.ReadinessTimeout, HistoryMax: a.HistoryMax,
		SkipAdmissionCheck: a.SkipAdmissionCheck, Events: a.Events}
}

func (a *RevisionUpgrade) plan(ctx context.Context, r *run) (*RevisionUpgradePlan, error) {
	ns := a.istioNamespace()
	rec, err := migrate.LoadRecord(ctx, r.client, ns)
	if err != nil {
		return nil, err
	}
	live, err := migrate.Observe(ctx, r.client, ns, rec)
	if err != nil {
		return nil, err
	}
	revs := live.Revisions
	p := &RevisionUpgradePlan{planned: planned{client: r.client}, record: rec}
	if a.Rollback {
		if p.Migration, err = migrate.Reverse(live, rec, a.Migrate); err != nil {
			return nil, err
		}
		p.From, p.To = p.Migration.From, p.Migration.To
		emitAll(r.events, p.Migration.SkipEvents())
		return p, nil
	}
	p.To = ownership.Rev(a.Spec.Revision)
	if p.From, err = oldRevision(revs, rec, p.To); err != nil {
		return nil, err
	}
	hop := &check.Hop{Object: "(Cluster)"}
	for _, rv := range revs {
		if rv.Name == p.From {
			p.FromVersion = rv.Version
			hop.Object = istiodOf(rv, hop.Object)
		}
	}
	p.ToVersion = a.Version
	hop.From = p.FromVersion
	if err := hopGate(ctx, r.client, hop, p.ToVersion, a.install().overrides(), r.events); err != nil {
		return nil, err
	}
	in := a.install()
	res, manifests, err := a.render(a.Spec, false)
	if err != nil {
		return nil, err
	}
	if p.Install, err = in.planFor(ctx, r, res, manifests); err != nil {
		return nil, err
	}
	o := a.Migrate
	o.From, o.To = p.From, p.To
	if p.Migration, err = migrate.Decide(live, rec, o); err != nil {
		return nil, err
	}
	emitAll(r.events, p.Migration.SkipEvents())
	for _, ns := range p.Migration.Left {
		r.events.Emit(event.Event{Type: event.Warning, Object: ref.New("Namespace", "", ns).String(),
			Message: fmt.Sprintf("labelled %s=%s: its workloads stay on revision %s (relabel it with --relabel)", ownership.LabelRevision, p.From, p.From)})
	}
	for _, pod := range p.Migration.Unrestartable {
		r.events.Emit(event.Event{Type: event.Warning, Object: pod.String(), Message: "no controller owns it: it stays on revision " + p.From + " until it is recreated"})
	}
	return p, nil
}

// emitAll emits es to s, in order.
func emitAll(s event.Sink, es []event.Event) {
	for _, e := range es {
		s.Emit(e)
	}
}

// istiodOf names rv's istiod (or, without one, or), the object the hop gate judges.
func istiodOf(rv *revision.Revision, or string) string {
	for _, c := range rv.Components {
		if c.Name == string(component.Pilot) {
			return c.Object
		}
	}
	return or
}

// oldRevision is the revision the workloads leave: an unfinished run's, else the one the
// default tag points at, else the only other revision with an istiod.
func oldRevision(revs []*revision.Revision, rec *migrate.Record, to string) (string, error) {
	if rec != nil && rec.To == to {
		return rec.From, nil
	}
	var others []string
	for _, rv := range revs {
		if rv.Name == to {
			continue
		}
		if slices.Contains(rv.Tags, tag.Default) {
			return rv.Name, nil
		}
		if rv.Namespace != "" {
			others = append(others, rv.Name)
		}
	}
	switch len(others) {
	case 1:
		return others[0], nil
	case 0:
		return "", fmt.Errorf("no control plane revision to upgrade from besides %s: install one first (istioctl install), or use --strategy in-place", to)
	}
	return "", fmt.Errorf("revisions %s run beside %s and no default tag says which to leave: point the default tag at it (istioctl tag set default --revision <old>)", strings.Join(others, ", "), to)
}

// Run carries out the plan (nil: it plans first) by the plan-then-write protocol, under the
// cluster lock.
func (a *RevisionUpgrade) Run(ctx context.Context, p *RevisionUpgradePlan) (migrate.Result, error) {
	r, err := a.start(stateOf(p), a.Events, a.DryRun)
	if err != nil {
		return migrate.Result{}, err
	}
	steps := protocol[*RevisionUpgradePlan, migrate.Result]{
		lock: func(*RevisionUpgradePlan) lockRun {
			return lockRun{action: "upgrade", revision: ownership.Rev(a.Spec.Revision), namespace: a.istioNamespace()}
		},
		plan: a.plan,
		replan: func(ctx context.Context, r *run, shown *RevisionUpgradePlan) (*RevisionUpgradePlan, []string, error) {
			fresh, err := a.plan(ctx, r)
			if err != nil {
				return nil, nil, err
			}
			var diff []string
			if was, now := shown.Migration.Writes(), fresh.Migration.Writes(); !slices.Equal(was, now) {
				diff = append(diff, fmt.Sprintf("the migration's writes changed: %d planned, %d now", len(was), len(now)))
			}
			if shown.Install != nil && fresh.Install != nil {
				_, d, err := a.install().replan(ctx, r, shown.Install)
				if err != nil {
					return nil, nil, err
				}
				diff = append(diff, d...)
			}
			return fresh, diff, nil
		},
		announce: a.announce,
		carryOut: a.carryOut,
		done:     a.doneEvent,
	}
	return steps.execute(ctx, r, p, a.Replan)
}

// announce is the plan event: the move, then every write into the user's objects.
func (a *RevisionUpgrade) announce(_ context.Context, r *run, p *RevisionUpgradePlan) {
	m := p.Migration
	what := fmt.Sprintf("revision %s -> %s: %d workloads in %d batches", p.From, p.To, m.Remaining(), len(m.Batches)-m.Done)
	switch {
	case m.Rollback:
		what = "rollback of " + what
	case m.Resumed:
		what += fmt.Sprintf(" (resumed: %d of %d batches done)", m.Done, len(m.Batches))
	}
	e := event.Event{Type: event.Plan, Message: what, DryRun: a.DryRun, Details: m.Writes(),
		PlanDetail: event.PlanDetail{SchemaVersion: event.SchemaVersion}}
	if p.Install != nil {
		e.Total = p.Install.Objects
		e.Plan = nil
	}
	r.events.Emit(e)
}

// carryOut installs the new revision (recorded in its install history), moves the
// workloads, and removes the old revision when asked and unused.
func (a *RevisionUpgrade) carryOut(ctx context.Context, r *run, p *RevisionUpgradePlan) (migrate.Result, error) {
	if p.Install != nil {
		in := a.install()
		res, err := in.carryOut(ctx, r, p.Install)
		if !a.DryRun {
			in.recordRun(ctx, r, p.Install, res, err)
		}
		if err != nil {
			return migrate.Result{}, fmt.Errorf("installing revision %s: %w", p.To, err)
		}
	}
	runner := &migrate.Runner{Client: r.client, Namespace: a.istioNamespace(), Events: r.events, DryRun: a.DryRun,
		Timeout: a.ReadinessTimeout, MoveTag: a.moveTag(r)}
	res, err := runner.Run(ctx, p.Migration, p.record)
	if err != nil || !a.PruneOld || p.Migration.Rollback {
		return res, err
	}
	return res, a.pruneOld(ctx, r, p)
}

// moveTag points a tag at a revision, as tag set --overwrite does.
func (a *RevisionUpgrade) moveTag(r *run) func(context.Context, migrate.TagMove) error {
	return func(ctx context.Context, t migrate.TagMove) error {
		if a.DryRun {
			return nil // the new revision's injector does not exist in a dry run
		}
		tp, err := tag.Generate(ctx, r.client, tag.Options{Tag: t.Tag, Revision: t.To, IstioNamespace: a.istioNamespace(),
			ManifestsDir: a.Spec.ManifestsDir, Overwrite: true, UserManaged: true})
		if err != nil {
			return err
		}
		if _, err := tp.Apply(ctx, r.client, false); err != nil {
			return err
		}
		r.events.Emit(event.Event{Type: event.RevisionTag, Object: ref.Of(tp.Objects[0]).String(),
			Message:   fmt.Sprintf("revision tag %s moved from %s to %s", t.Tag, t.From, t.To),
			TagChange: event.TagChange{TagOutcome: event.TagMoved}})
		return nil
	}
}

// pruneOld removes the old revision once no pod, namespace or tag uses it; it refuses
// while one does, naming them.
func (a *RevisionUpgrade) pruneOld(ctx context.Context, r *run, p *RevisionUpgradePlan) error {
	revs, err := revision.List(ctx, r.client, a.istioNamespace())
	if err != nil {
		return err
	}
	for _, rv := range revs {
		if rv.Name != p.From {
			continue
		}
		var users []string
		for _, w := range rv.Workloads {
			users = append(users, fmt.Sprintf("%s (%d pods)", w.Ref(), len(w.Pods)))
		}
		for _, s := range rv.Namespaces {
			users = append(users, ref.New("Namespace", "", s.Namespace).String()+" ("+s.Label+")")
		}
		for _, t := range rv.Tags {
			users = append(users, "tag "+t)
		}
		if len(users) > 0 {
			return fmt.Errorf("revision %s is still used, so it stays: %s", p.From, strings.Join(users, ", "))
		}
	}
	u := &Uninstall{Config: a.Config, Spec: spec.Options{Revision: p.From}, DryRun: a.DryRun, Timeout: a.ReadinessTimeout, Events: a.Events}
	t, err := u.target()
	if err != nil {
		return err
	}
	up, err := u.plan(ctx, r, t)
	if err != nil {
		return err
	}
	if _, err := u.remove(ctx, r, up); err != nil {
		return fmt.Errorf("removing revision %s: %w", p.From, err)
	}
	return migrate.DeleteRecord(ctx, r.client, a.istioNamespace(), a.DryRun)
}

// doneEvent is the run's last event: an upgrade's, or a rollback's (the schema's closed set
// of operations: docs/events.md).
func (a *RevisionUpgrade) doneEvent(p *RevisionUpgradePlan, res migrate.Result, err error) event.Event {
	e := event.Event{RunEnd: event.RunEnd{Operation: event.OperationUpgrade, Result: event.ResultOf(err, errors.Is(err, context.Canceled))}}
	e.Message = fmt.Sprintf("revision %s -> %s: %d batches, %d workloads restarted", p.From, p.To, res.Finished, res.Restarted)
	if p.Migration.Rollback {
		e.Operation = event.OperationRollback
		e.Message = fmt.Sprintf("revision %s: %d batches, %d workloads restarted", p.To, res.Finished, res.Restarted)
	}
	return e
}
