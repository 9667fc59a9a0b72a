package action

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/install"
)

// Rollback re-installs an install record of a revision: its resolved spec, resolved again
// with this istioctl, installed as Install does (so what newer installs added is pruned), and
// recorded as a new record.
type Rollback struct {
	*Config
	// Number is the record to re-install; 0 for the previous successful one.
	Number int
	// Revision is the revision to roll back ("" or "default" for the default one).
	Revision         string
	DryRun           bool
	ReadinessTimeout time.Duration
	HistoryMax       int
	TakeOwnership    bool
	// Replan: see Install.Replan.
	Replan bool
	Events event.Sink

	// target and note are set when another action rolls back (install --atomic); spare
	// is then what existed before the failed install, which the rollback does not prune.
	target *history.Record
	note   string
	spare  *install.Snapshot
}

// RollbackPlan is the record a rollback re-installs and the install that does it.
type RollbackPlan struct {
	// Target is the record re-installed: sealed (history.Record.Untrusted), or the plan
	// fails naming it.
	Target *history.Record
	// Install is the plan of its install.
	Install *InstallPlan
	// RBAC is what the rollback changes in what Roles, ClusterRoles and bindings grant;
	// Overlays how its k8s overlays differ from the newest sealed record's (review).
	RBAC     []install.RBACChange
	Overlays []string
}

func (p *RollbackPlan) planState() *planned { return p.Install.planState() }

// Plan finds the record and plans its install. It also reads the cluster lock, as
// Install.Plan does.
func (a *Rollback) Plan(ctx context.Context) (*RollbackPlan, error) {
	r, err := a.planning(ctx, a.Events, a.DryRun)
	if err != nil {
		return nil, err
	}
	p, err := a.plan(ctx, r)
	if err != nil {
		return nil, err
	}
	p.Install.lock = r.planLockState(ctx)
	return p, nil
}

// plan finds the record (unless another action gave it), refuses it unless it is sealed,
// plans its install and says what that changes in RBAC and overlays (review).
func (a *Rollback) plan(ctx context.Context, r *run) (*RollbackPlan, error) {
	target := a.target
	ns, rev := a.istioNamespace(), history.Rev(a.Revision)
	if target != nil {
		ns, rev = target.Namespace(), history.Rev(target.Revision)
	}
	records, err := (&history.Store{Client: r.client, Namespace: ns}).List(ctx, rev)
	if target == nil {
		if err != nil {
			return nil, err
		}
		if len(records) == 0 {
			return nil, fmt.Errorf("no install records of revision %s in namespace %s: nothing to roll back to (see 'istioctl history', and -i)", rev, ns)
		}
		if target, err = history.Target(records, a.Number); err != nil {
			return nil, err
		}
	}
	if err := trusted(target); err != nil {
		return nil, err
	}
	res, manifests, err := a.renderRecord(target)
	if err != nil {
		return nil, err
	}
	ip, err := a.install(target).planFor(ctx, r, res, manifests)
	if err != nil {
		return nil, err
	}
	p := &RollbackPlan{Target: target, Install: ip}
	return p, a.review(ctx, r, p, records)
}

// install is the Install action that carries out the rollback to t.
func (a *Rollback) install(t *history.Record) *Install {
	return &Install{Config: a.Config, DryRun: a.DryRun, ReadinessTimeout: a.ReadinessTimeout, HistoryMax: a.HistoryMax,
		TakeOwnership: a.TakeOwnership, Replan: a.Replan, Events: a.Events,
		rollbackOf: t.Number, what: fmt.Sprintf("rollback to %d%s", t.Number, a.note), skipRelied: true, spare: a.spare}
}

// steps are the install's steps around the record the plan re-installs.
func (a *Rollback) steps() protocol[*RollbackPlan, *InstallResult] {
	return protocol[*RollbackPlan, *InstallResult]{
		lock: func(p *RollbackPlan) lockRun {
			if p == nil {
				// Which record, and what it installs, are read under the lock.
				return lockRun{action: history.ActionRollback, revision: history.Rev(a.Revision), namespace: a.istioNamespace()}
			}
			return a.install(p.Target).lockRun(p.Install.res)
		},
		plan: a.plan,
		replan: func(ctx context.Context, r *run, shown *RollbackPlan) (*RollbackPlan, []string, error) {
			ip, diff, err := a.install(shown.Target).replan(ctx, r, shown.Install)
			return &RollbackPlan{Target: shown.Target, Install: ip, RBAC: shown.RBAC, Overlays: shown.Overlays}, diff, err
		},
		announce: func(ctx context.Context, r *run, p *RollbackPlan) { a.install(p.Target).announce(ctx, r, p.Install) },
		carryOut: func(ctx context.Context, r *run, p *RollbackPlan) (*InstallResult, error) {
			res, err := a.install(p.Target).carryOut(ctx, r, p.Install)
			if ie := (*install.InterruptedError)(nil); errors.As(err, &ie) {
				ie.Command = "rollback" // what to run again, in the record and the error
			}
			return res, err
		},
		record: func(ctx context.Context, r *run, p *RollbackPlan, res *InstallResult, err error) {
			a.install(p.Target).recordRun(ctx, r, p.Install, res, err)
		},
		done: func(p *RollbackPlan, res *InstallResult, err error) event.Event {
			return a.install(p.Target).doneEvent(p.Install, res, err)
		},
	}
}

// Run carries out plan (nil: it plans first) under the cluster lock, as Install.Run does.
func (a *Rollback) Run(ctx context.Context, plan *RollbackPlan) (*InstallResult, error) {
	r, err := a.start(stateOf(plan), a.Events, a.DryRun)
	if err != nil {
		return nil, err
	}
	res, err := a.steps().execute(ctx, r, plan, a.Replan)
	if ie := (*install.InterruptedError)(nil); !errors.As(err, &ie) && errors.Is(err, context.Canceled) {
		return res, fmt.Errorf("interrupted: %w; run the same rollback again to finish it", err)
	}
	return res, err
}
