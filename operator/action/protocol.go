package action

import (
	"context"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/lock"
)

// Every operation that writes (install and upgrade, uninstall, rollback, tag set and
// remove, a fleet's runs, a link's writes) goes through one protocol, written once here:
//
//	plan ─► lock ─► re-plan ─► carry out ─► record ─► done (its exit code)
//
// An operation brings its steps (protocol); the order, the cluster lock, the re-plan after
// a prompt or another writer, the done event and its exit code are the protocol's. A dry
// run takes no lock; outside the lock nothing may be written: the cluster client refuses
// any write whose context carries no run's permit (kube.Client.GuardWrites), and a dry
// run's requests are server-side dry runs, which persist nothing.

// run is one call of an operation: made per call (Plan, Run), never kept in a
// configuration struct. It holds the cluster client the call reads and writes through, the
// events it emits, and, while the protocol holds it, the cluster lock. A run inside a run
// (a rollback's install, install --atomic's restore) is the same run.
type run struct {
	cfg    *Config
	client *kube.Client
	events event.Sink
	dryRun bool
	// reached says the cluster answered (a ping, or the lock's first read).
	reached bool
	// held is the cluster lock while the run holds it; unlocked says the run writes
	// without it (--skip-lock, or an operation that takes none on purpose).
	held     *lock.Held
	unlocked bool
	// failed is the exit code of a done the run already emitted for a failure: the done of
	// what it does afterwards (install --atomic's restore) keeps it.
	failed int
}

// begin makes the run of one call, its events stamped as they go to events (nil: dropped).
func (c *Config) begin(client *kube.Client, events event.Sink, dryRun bool) *run {
	return &run{cfg: c, client: client, events: event.Stamped(orDiscard(events)), dryRun: dryRun}
}

// plan begins a call that plans: connected, the cluster known to answer.
func (c *Config) planning(ctx context.Context, events event.Sink, dryRun bool) (*run, error) {
	client, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	r := c.begin(client, events, dryRun)
	r.reached = true
	return r, nil
}

// quiet is r emitting nothing: a re-plan's reads say nothing twice.
func (r *run) quiet() *run {
	q := *r
	q.events = event.Discard{}
	return &q
}

// reach checks, once, that the cluster answers.
func (r *run) reach(ctx context.Context) error {
	if r.reached || r.client == nil {
		return nil
	}
	if _, err := r.client.ServerVersion(ctx); err != nil {
		return err
	}
	r.reached = true
	return nil
}

// planned is what every plan keeps of the call that made it: the client its reads went
// through, and what it knew of the cluster lock.
type planned struct {
	client *kube.Client
	lock   planLock
}

func (p *planned) planState() *planned { return p }

// plan is what the protocol needs of an operation's plan.
type plan interface {
	comparable
	planState() *planned
}

// protocol is one writing operation's steps; execute runs them in the protocol's order.
// P is the operation's plan, R what its run returns.
type protocol[P plan, R any] struct {
	// lock says what the run takes the cluster lock for (a zero plan: before there is
	// one). nil: the operation takes no lock of its own (a fleet: each cluster's run takes
	// its cluster's).
	lock func(P) lockRun
	// plan reads the cluster and decides, emitting its warnings; it writes nothing.
	plan func(context.Context, *run) (P, error)
	// replan plans again (r emits nothing) and says how the new plan differs from shown.
	replan func(ctx context.Context, r *run, shown P) (P, []string, error)
	// idle says the plan has nothing to do: the run ends with it, and emits nothing more.
	idle func(P) bool
	// announce emits the plan event (and the warnings that come before it).
	announce func(context.Context, *run, P)
	// carryOut writes the plan (a dry run: asks the server to check it).
	carryOut func(context.Context, *run, P) (R, error)
	// record writes down what the run did (the install history); not in a dry run.
	record func(ctx context.Context, r *run, p P, res R, err error)
	// done words the run's last event: its Operation, Message, and Outcome when it was
	// interrupted; the protocol adds the rest (finish). nil: the operation has no event
	// stream of its own (tag), and its command says how it ended.
	done func(p P, res R, err error) event.Event
	// after runs once the done event is out, still under the lock (install --atomic's
	// restore), and returns the run's error.
	after func(ctx context.Context, r *run, p P, res R, err error) error
}

// execute carries out p (zero: it plans first, under the lock: one set of reads) as the
// protocol says. A plan that was shown (replan: a person confirmed it) or that another
// writer may have made old (the cluster lock changed hands since) is made again first,
// quietly; when the new one writes differently the run stops with a *PlanChangedError,
// having written nothing.
func (s protocol[P, R]) execute(ctx context.Context, r *run, p P, replan bool) (R, error) {
	var res R
	var zero P
	step := func(ctx context.Context) error {
		var err error
		switch {
		case p == zero:
			if err = r.reach(ctx); err != nil {
				return err
			}
			if p, err = s.plan(ctx, r); err != nil {
				return err
			}
			p.planState().lock = r.planLockState(ctx)
		case replan || r.moved(p.planState().lock):
			if p, err = s.again(ctx, r, p); err != nil {
				return err
			}
		}
		res, err = s.carry(ctx, r, p)
		return err
	}
	if r.dryRun || s.lock == nil {
		return res, step(ctx)
	}
	return res, r.locked(ctx, s.lock(p), step)
}

// again is replan, its difference a *PlanChangedError.
func (s protocol[P, R]) again(ctx context.Context, r *run, shown P) (P, error) {
	fresh, diff, err := s.replan(ctx, r.quiet(), shown)
	if err == nil && len(diff) > 0 {
		err = &PlanChangedError{Changes: diff}
	}
	return fresh, err
}

// carry is the plan's run from its announcement to what comes after its done.
func (s protocol[P, R]) carry(ctx context.Context, r *run, p P) (R, error) {
	var res R
	if s.idle != nil && s.idle(p) {
		return res, nil
	}
	if s.announce != nil {
		s.announce(ctx, r, p)
	}
	res, err := s.carryOut(ctx, r, p)
	if lost := lockLost(ctx); lost != nil {
		err = lost // it stopped the run: say so, not "interrupted"
	}
	if s.record != nil && !r.dryRun {
		s.record(ctx, r, p, res, err)
	}
	if s.done != nil {
		r.finish(s.done(p, res, err), err)
	}
	if s.after != nil {
		err = s.after(ctx, r, p, res, err)
	}
	return res, err
}

// finish emits a run's done event e, ended by err: the same way for every operation. Its
// exit code is err's (event.ExitCode), or, after a done that failed, that failure's.
func (r *run) finish(e event.Event, err error) {
	e.Type, e.DryRun = event.Done, r.dryRun
	if e.Result == "" {
		e.Result = event.ResultOf(err, false)
	}
	if err != nil && e.Error == "" {
		e.Error = err.Error()
	}
	code := event.ExitCode(err)
	if code == event.ExitOK {
		code = r.failed
	}
	r.failed = code
	e.ExitCode = event.Code(code)
	r.events.Emit(e)
}

// write runs fn as a run of the protocol with nothing to plan or report (a link Secret,
// cacerts): under the cluster lock of client's cluster (what says what for), its lock
// events to events.
func (c *Config) write(ctx context.Context, client *kube.Client, events event.Sink, what lockRun, fn func(context.Context) error) error {
	r := c.begin(client, events, false)
	r.reached = true
	return r.locked(ctx, what, fn)
}

func orDiscard(s event.Sink) event.Sink {
	if s == nil {
		return event.Discard{}
	}
	return s
}

// stateOf is p's planned state; nil for no plan.
func stateOf[P plan](p P) *planned {
	var zero P
	if p == zero {
		return nil
	}
	return p.planState()
}

// start begins the run of a Run call: through the client of its plan (which reached the
// cluster), or without one through a new client.
func (c *Config) start(p *planned, events event.Sink, dryRun bool) (*run, error) {
	if p != nil {
		r := c.begin(p.client, events, dryRun)
		r.reached = true
		return r, nil
	}
	client, err := c.newClient()
	if err != nil {
		return nil, err
	}
	return c.begin(client, events, dryRun), nil
}
