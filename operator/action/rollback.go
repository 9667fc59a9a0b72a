package action

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
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

	// target and note are set when another action rolls back (install --atomic).
	target *history.Record
	note   string
}

// RollbackPlan is the record a rollback re-installs and the install that does it.
type RollbackPlan struct {
	// Target is the record re-installed.
	Target *history.Record
	// Install is the plan of its install.
	Install *InstallPlan
}

// Plan finds the record and plans its install. Outside a run it also reads the cluster
// lock, as Install.Plan does.
func (a *Rollback) Plan(ctx context.Context) (*RollbackPlan, error) {
	events := event.Stamped(orDiscard(a.Events))
	target := a.target
	if target == nil {
		client, err := a.connect(ctx)
		if err != nil {
			return nil, err
		}
		ns := a.istioNamespace()
		records, err := (&history.Store{Client: client, Namespace: ns}).List(ctx, history.Rev(a.Revision))
		if err != nil {
			return nil, err
		}
		if len(records) == 0 {
			return nil, fmt.Errorf("no install records of revision %s in namespace %s: nothing to roll back to (see 'istioctl history', and -i)", history.Rev(a.Revision), ns)
		}
		if target, err = history.Target(records, a.Number); err != nil {
			return nil, err
		}
	}
	res, manifests, err := a.renderRecord(target)
	if err != nil {
		return nil, err
	}
	ip, err := a.install(target).planFor(ctx, res, manifests, events)
	if err != nil {
		return nil, err
	}
	ip.lock = a.planLockState(ctx, ip.client, events, a.DryRun)
	return &RollbackPlan{Target: target, Install: ip}, nil
}

// install is the Install action that carries out the rollback to t.
func (a *Rollback) install(t *history.Record) *Install {
	return &Install{Config: a.Config, DryRun: a.DryRun, ReadinessTimeout: a.ReadinessTimeout, HistoryMax: a.HistoryMax,
		TakeOwnership: a.TakeOwnership, Replan: a.Replan, Events: a.Events,
		record: &history.Record{Action: history.ActionRollback, RollbackOf: t.Number},
		what:   fmt.Sprintf("rollback to %d%s", t.Number, a.note), skipRelied: true}
}

// Run carries out plan (nil: it plans first) under the cluster lock, as Install.Run does.
func (a *Rollback) Run(ctx context.Context, plan *RollbackPlan) (*InstallResult, error) {
	res, err := a.run(ctx, plan)
	if errors.Is(err, context.Canceled) {
		return res, fmt.Errorf("interrupted: %w; run the same rollback again to finish it", err)
	}
	return res, err
}

func (a *Rollback) run(ctx context.Context, plan *RollbackPlan) (*InstallResult, error) {
	if a.DryRun {
		var err error
		if plan == nil {
			if plan, err = a.Plan(ctx); err != nil {
				return nil, err
			}
		}
		return a.install(plan.Target).execute(ctx, plan.Install)
	}
	// Which record, and what it installs, are read under the lock when there is no plan.
	run := lockRun{action: history.ActionRollback, revision: history.Rev(a.Revision), namespace: a.istioNamespace()}
	if plan != nil {
		run = a.install(plan.Target).lockRun(plan.Install.res)
	}
	var out *InstallResult
	err := a.locked(ctx, event.Stamped(orDiscard(a.Events)), run, func(ctx context.Context) error {
		var err error
		if plan == nil {
			if plan, err = a.Plan(ctx); err != nil {
				return err
			}
		}
		out, err = a.install(plan.Target).execute(ctx, plan.Install)
		return err
	})
	return out, err
}

func orDiscard(s event.Sink) event.Sink {
	if s == nil {
		return event.Discard{}
	}
	return s
}
