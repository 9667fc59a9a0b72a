package action

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"

	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/lock"
)

// DefaultLockTimeout is how long a writer waits for another's cluster lock unless told otherwise.
const DefaultLockTimeout = 10 * time.Minute

// LockOptions say how the writing actions take the cluster lock (operator/lock): every
// run that writes holds it from before its first write to its end, so that two istioctl
// commands never write to one cluster at once.
type LockOptions struct {
	// Timeout is how long to wait while another holds it (0: fail at once).
	Timeout time.Duration
	// Skip writes without the lock (--skip-lock), with a warning.
	Skip bool
	// Command names the run to other writers ("istioctl upgrade").
	Command string
	// LeaseDuration, RenewDeadline and RetryPeriod replace the fixed periods when set (tests).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// MaxLockLeaseDuration caps LockOptions.LeaseDuration (--lock-lease-duration); waiters
// honour at most this much of any holder's lease (lock.MaxLeaseDuration).
const MaxLockLeaseDuration = lock.MaxLeaseDuration

// CheckLockLeaseDuration refuses a lease duration above MaxLockLeaseDuration, naming the limit.
func CheckLockLeaseDuration(d time.Duration) error { return lock.CheckLeaseDuration(d) }

// The lock's errors. LockHeldError (another writer held the lock past --lock-timeout) has
// its own exit code.
type (
	LockHeldError      = lock.HeldError
	LockLostError      = lock.LostError
	LockForbiddenError = lock.ForbiddenError
)

// lockRun says what a run takes the lock for: the history action (history.ActionInstall,
// ActionRollback, or "uninstall", "tag"), and the install it writes.
type lockRun struct {
	action, revision, namespace, profile string
}

func (c *Config) lockOptions() LockOptions {
	if c.Lock == nil {
		return LockOptions{Timeout: DefaultLockTimeout}
	}
	return *c.Lock
}

func (o LockOptions) periods() lock.Periods {
	return lock.Periods{LeaseDuration: o.LeaseDuration, RenewDeadline: o.RenewDeadline, RetryPeriod: o.RetryPeriod}
}

// leases is a Lease client of the cluster, unguarded (Client.Config), with requests
// bounded by the lock's periods.
func (c *Config) leases(client *kube.Client) (coordinationv1client.LeasesGetter, error) {
	cfg := rest.CopyConfig(client.Config)
	cfg.Timeout = c.lockOptions().periods().RequestTimeout(cfg.Timeout)
	return coordinationv1client.NewForConfig(cfg)
}

// locked runs fn holding the cluster lock (the protocol's lock step): taken before (fn
// does every read the run's writes depend on, and every write), released after, whatever
// fn returns, Ctrl-C included. Another holder is waited for up to LockOptions.Timeout
// (lock events say who); an expired one is taken over, and its run written into the
// install history as interrupted when it recorded nothing. fn's context carries the run's
// write permit (kube.WithWritePermit), whose check fails once the lock is lost (a renewal
// could not be made in time, or another writer has the Lease): every write of the run
// fails from then on, fn's context ends, and the run returns the *LockLostError. A run
// inside a run is under the outer run's lock.
func (r *run) locked(ctx context.Context, what lockRun, fn func(context.Context) error) error {
	if r.held != nil || r.unlocked {
		return fn(ctx)
	}
	opts := r.cfg.lockOptions()
	if opts.Skip {
		r.events.Emit(event.Event{Type: event.Warning, Message: "--skip-lock: writing WITHOUT the cluster lock. Another istioctl writing to this cluster at the same time " +
			"can undo what this run applies and leave the cluster matching neither spec; make sure none does"})
		return r.withoutLock(ctx, fn)
	}
	leases, err := r.cfg.leases(r.client)
	if err != nil {
		return err
	}
	command := opts.Command
	if command == "" {
		command = "istioctl " + what.action
	}
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var waited atomic.Bool
	locker := &lock.Locker{
		Leases:  leases,
		Self:    lock.Self(command, what.action, what.revision, what.namespace, what.profile, r.cfg.Version),
		Periods: opts.periods(),
		Wait:    opts.Timeout,
		Explain: r.client.ExplainError,
		Waiting: func(h lock.Holder, _ time.Duration) {
			waited.Store(true)
			r.events.Emit(event.Event{Type: event.Lock, Object: lockObject,
				Message:    fmt.Sprintf("waiting for the cluster lock: %s has held it%s; waiting up to %s (--lock-timeout)", h, heldFor(h), opts.Timeout),
				LockChange: event.LockChange{Lock: event.LockWaiting, Holder: h.String(), Since: h.Acquired}})
		},
		Lost: func(err *lock.LostError) {
			e := event.Event{Type: event.Lock, Object: lockObject, Error: err.Error(), LockChange: event.LockChange{Lock: event.LockLost}}
			if err.To != nil {
				e.Holder = err.To.String()
			}
			r.events.Emit(e)
			cancel(err)
		},
	}
	held, err := locker.Acquire(ctx)
	if err != nil {
		return err
	}
	// The lock's first read was the run's first request: the cluster answers.
	r.reached, r.held = true, held
	defer func() {
		r.held = nil
		if err := held.Release(); err != nil {
			r.events.Emit(event.Event{Type: event.Warning, Object: lockObject, Message: fmt.Sprintf(
				"%v; it expires on its own once unrenewed for its lease duration, and the next writer takes it over", err)})
		}
	}()
	lctx = kube.WithWritePermit(lctx, kube.WritePermit{Fence: held.Fence})
	switch {
	case held.Previous.Identity != "":
		note := r.recordInterrupted(lctx, held.Previous)
		r.events.Emit(event.Event{Time: held.Acquired, Type: event.Lock, Object: lockObject,
			Message: fmt.Sprintf("took over the expired cluster lock of %s%s: it stopped renewing it without releasing it (killed, or cut off from the cluster)%s",
				held.Previous, startedAt(held.Previous), note),
			LockChange: event.LockChange{Lock: event.LockTakenOver, Holder: held.Previous.String()}})
	case waited.Load():
		r.events.Emit(event.Event{Time: held.Acquired, Type: event.Lock, Object: lockObject,
			Message:    fmt.Sprintf("took the cluster lock after waiting %s", held.Waited.Round(100*time.Millisecond)),
			LockChange: event.LockChange{Lock: event.LockAcquired}})
	}
	err = fn(lctx)
	if lost := held.Err(); lost != nil {
		return lost
	}
	return err
}

// withoutLock runs fn writing without the cluster lock: --skip-lock, or the writes of
// create-remote-secret in the cluster whose credentials it hands out (a ServiceAccount and
// a token of its own, created only when missing), which never took it.
func (r *run) withoutLock(ctx context.Context, fn func(context.Context) error) error {
	if r.held != nil || r.unlocked {
		return fn(ctx)
	}
	r.unlocked = true
	defer func() { r.unlocked = false }()
	return fn(kube.WithWritePermit(ctx, kube.WritePermit{}))
}

// lockObject names the Lease in events.
var lockObject = ref.New("Lease", lock.Namespace, lock.Name).String()

// heldFor says how long a holder has held the lock (by its clock, as the Lease says).
func heldFor(h lock.Holder) string {
	if h.Acquired.IsZero() {
		return ""
	}
	return fmt.Sprintf(" for %s", max(0, time.Since(h.Acquired)).Round(time.Second))
}

func startedAt(h lock.Holder) string {
	if h.Started.IsZero() {
		return ""
	}
	return ", started " + h.Started.UTC().Format(time.RFC3339)
}

// recordInterrupted writes the run of a holder whose expired lock was taken over into its
// revision's install history as interrupted, unless it recorded its run itself before it
// died (a record carries its run's lock identity). Only runs that keep a history (install,
// upgrade, rollback) get one. It returns what it did, for the takeover's line.
func (r *run) recordInterrupted(ctx context.Context, prev lock.Holder) string {
	if (prev.Action != history.ActionInstall && prev.Action != history.ActionRollback) || prev.Namespace == "" {
		return ""
	}
	store := &history.Store{Client: r.client, Namespace: prev.Namespace}
	rev := history.Rev(prev.Revision)
	records, err := store.List(ctx, rev)
	if err != nil {
		return fmt.Sprintf("; its run is not in the install history: %v", err)
	}
	for _, r := range records {
		if r.Run == prev.Identity && r.Untrusted() == nil { // a forged record does not say it finished
			return fmt.Sprintf("; its run had finished (record %d of revision %s)", r.Number, rev)
		}
	}
	rec := &history.Record{Revision: rev, Time: time.Now().UTC(), ToolVersion: prev.Version, Action: prev.Action,
		Outcome: history.Interrupted, Profile: prev.Profile, Run: prev.Identity}
	if !prev.Renewed.IsZero() {
		rec.Time = prev.Renewed.UTC() // its last sign of life
	}
	rec.SetDescription(fmt.Sprintf("%s interrupted: %s stopped renewing the cluster lock before it finished; the cluster may hold part of it", prev.Action, prev))
	if err := store.Create(ctx, rec, 0); err != nil {
		return fmt.Sprintf("; its run could not be written into the install history: %v", err)
	}
	return fmt.Sprintf("; its run is recorded as interrupted (record %d of revision %s)", rec.Number, rev)
}

// peekLock reads the cluster lock for a plan or a read-only command: its resourceVersion
// (a plan keeps it, so that Run knows whether another writer ran since) and its holder,
// when another holds it. ok is false when it could not be read (no permission, say): a
// plan then counts as possibly out of date.
func (c *Config) peekLock(ctx context.Context, client *kube.Client) (rv string, holder lock.Holder, ok bool) {
	leases, err := c.leases(client)
	if err != nil {
		return "", lock.Holder{}, false
	}
	holder, rv, err = lock.Peek(ctx, leases)
	return rv, holder, err == nil
}

// writeInProgress says a write is in progress, for a plan's or a reader's warning; ""
// when none is.
func writeInProgress(h lock.Holder, what string) string {
	if h.Identity == "" {
		return ""
	}
	msg := fmt.Sprintf("a write is in progress: %s has held the cluster lock%s; %s", h, heldFor(h), what)
	if h.Stale() {
		msg += fmt.Sprintf(" (it has not renewed the lock for %s by this machine's clock: it may be gone, and the next writer takes it over)",
			time.Since(h.Renewed).Round(time.Second))
	}
	return msg
}

// warnIfWriting is a read-only command's one warning line when a write is in progress.
func (c *Config) warnIfWriting(ctx context.Context, client *kube.Client) {
	if _, h, ok := c.peekLock(ctx, client); ok {
		if msg := writeInProgress(h, "what this shows may change when it finishes"); msg != "" {
			c.warn(msg)
		}
	}
}

// planLock is what a plan knows of the cluster lock.
type planLock struct {
	// rv is the Lease's resourceVersion when the plan was made; known says it was read;
	// underLock says the plan was made holding the lock (nothing can have changed it).
	rv               string
	known, underLock bool
}

// planLockState reads the lock for a plan (and warns, as an event, when another holds
// it). Under the run's own lock, or writing without it, it reads nothing; nor does a run
// over several clusters (a fleet), whose runs in each read their own.
func (r *run) planLockState(ctx context.Context) planLock {
	if r.held != nil || r.unlocked || r.client == nil {
		return planLock{underLock: r.held != nil}
	}
	rv, h, ok := r.cfg.peekLock(ctx, r.client)
	what := "this run waits for it before writing (up to --lock-timeout), then checks its plan again"
	if r.dryRun {
		what = "what this dry run shows may change when it finishes"
	}
	if msg := writeInProgress(h, what); msg != "" {
		r.events.Emit(event.Event{Type: event.Warning, Message: msg})
	}
	return planLock{rv: rv, known: ok}
}

// moved says another writer may have written since a plan was made: the Lease changed
// since (a holder took, renewed or released it), or the plan could not tell. A plan made
// under the lock, or a run without it (--skip-lock), has nothing to compare.
func (r *run) moved(p planLock) bool {
	if p.underLock || r.held == nil {
		return false
	}
	return !p.known || p.rv != r.held.Observed
}

// lockLost is the *LockLostError that ended ctx, if the lock's loss did.
func lockLost(ctx context.Context) error {
	var lost *lock.LostError
	if errors.As(context.Cause(ctx), &lost) {
		return lost
	}
	return nil
}
