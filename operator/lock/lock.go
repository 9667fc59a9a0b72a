package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// Locker takes the cluster lock for one run.
type Locker struct {
	// Leases reaches the Lease (its requests should time out within Periods.RequestTimeout).
	Leases coordinationv1client.LeasesGetter
	// Self is who takes it and what for (Self()).
	Self    Holder
	Periods Periods
	// Wait bounds how long Acquire waits while another holds the lock (0: not at all).
	Wait time.Duration
	// Waiting, when set, hears of each holder Acquire starts waiting for, and Lost of the
	// loss of a held lock; both are called from other goroutines.
	Waiting func(holder Holder, waited time.Duration)
	Lost    func(*LostError)
	// Explain, when set, turns a request error into one that says what to check.
	Explain func(error) error
}

func (l *Locker) explain(err error) error {
	if err == nil || l.Explain == nil {
		return err
	}
	return l.Explain(err)
}

// Acquire takes the lock: at once when it is free (one read and one write), else once
// its holder releases it (a watch wakes the wait at once) or once the holder's lease has
// gone unrenewed for its duration (taken over: Held.Previous names that holder), waiting at
// most Wait. It fails with a *HeldError when the wait ends first, a *ForbiddenError when
// the user may not use the Lease, and the explained request error when the cluster does
// not answer its first request. Nothing but the Lease is read or written.
func (l *Locker) Acquire(ctx context.Context) (*Held, error) {
	p := l.Periods.withDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s := &state{self: l.Self, ann: l.Self.annotations(), explain: l.explain, changed: make(chan struct{}, 1), lostCh: make(chan struct{}), giveUp: p.LeaseDuration}
	s.onLost = l.Lost
	start := time.Now()
	e, err := l.elect(s, p)
	if err != nil {
		return nil, err
	}
	var timeout <-chan time.Time
	if l.Wait > 0 {
		t := time.NewTimer(l.Wait)
		defer t.Stop()
		timeout = t.C
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	var released <-chan struct{}
	waitingFor := ""
	fail := func(err error) (*Held, error) {
		e.stop()
		if s.snapshot().acquired { // taken in the same moment: give it back
			_ = (&Held{s: s, e: e, l: l, p: p}).Release()
		}
		return nil, err
	}
	for {
		select {
		case <-s.changed:
			snap := s.snapshot()
			switch {
			case snap.acquired:
				return &Held{Previous: snap.prev, Observed: snap.observed, Acquired: snap.acquiredAt, Waited: snap.acquiredAt.Sub(start), s: s, e: e, l: l, p: p}, nil
			case snap.fatal != nil:
				return fail(snap.fatal)
			case snap.other.Identity != "" && snap.other.Identity != waitingFor:
				waitingFor = snap.other.Identity
				if l.Wait <= 0 {
					return fail(&HeldError{Holder: snap.other, Waited: time.Since(start)})
				}
				if l.Waiting != nil {
					l.Waiting(snap.other, time.Since(start))
				}
				if released == nil {
					released = l.watchReleases(wctx, snap.seenRV, p)
				}
			}
		case <-released:
			// The holder let go: try now rather than at the next retry. A fresh elector's
			// first try is immediate; nothing it judged is lost (the record changed).
			e.stop()
			if e, err = l.elect(s, p); err != nil {
				return nil, err
			}
		case <-timeout:
			if snap := s.snapshot(); snap.other.Identity == "" && snap.lastErr != nil {
				// Nobody was seen holding it: the requests failed, say why.
				return fail(fmt.Errorf("could not take %s within --lock-timeout %s: %w", what, l.Wait, s.explain(snap.lastErr)))
			}
			return fail(&HeldError{Holder: s.snapshot().other, Waited: time.Since(start), Timeout: l.Wait})
		case <-ctx.Done():
			return fail(fmt.Errorf("interrupted while waiting for %s: %w", what, ctx.Err()))
		}
	}
}

// elector runs one client-go LeaderElector over the shared state.
type elector struct {
	cancel   context.CancelFunc
	done     chan struct{}
	stopping atomic.Bool
}

// elect starts a LeaderElector. It runs on its own context, not the caller's: a holder
// keeps renewing after Ctrl-C until its writes in flight have finished and it releases.
// client-go's logging goes nowhere (it would print onto the user's terminal).
func (l *Locker) elect(s *state, p Periods) (*elector, error) {
	e := &elector{done: make(chan struct{})}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: Namespace, Name: Name},
			Client:     observed{LeasesGetter: l.Leases, s: s},
			LockConfig: resourcelock.ResourceLockConfig{Identity: s.self.Identity},
		},
		LeaseDuration: p.LeaseDuration, RenewDeadline: p.RenewDeadline, RetryPeriod: p.RetryPeriod,
		Name: Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {},
			OnStoppedLeading: func() {
				if !e.stopping.Load() {
					s.renewFailed(p.RenewDeadline)
				}
			},
		},
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(quiet())
	e.cancel = cancel
	go func() {
		defer close(e.done)
		le.Run(ctx)
	}()
	return e, nil
}

// quiet is a context whose klog logger (client-go's, for the lock's requests) drops
// everything: it would print onto the user's terminal.
func quiet() context.Context { return klog.NewContext(context.Background(), logr.Discard()) }

// stop ends the elector (its acquire or renew loop) and returns once it has.
func (e *elector) stop() {
	e.stopping.Store(true)
	e.cancel()
	<-e.done
}

// watchReleases signals when the Lease is released or deleted, from a watch of it started
// at rv (the version the wait read), re-established whenever it ends.
func (l *Locker) watchReleases(ctx context.Context, rv string, p Periods) <-chan struct{} {
	ch := make(chan struct{}, 1)
	signal := func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	go func() {
		for ctx.Err() == nil {
			w, err := l.Leases.Leases(Namespace).Watch(ctx, metav1.ListOptions{
				FieldSelector: fields.OneTermEqualSelector("metadata.name", Name).String(), ResourceVersion: rv})
			if err != nil {
				rv = ""
				select {
				case <-ctx.Done():
				case <-time.After(p.RetryPeriod):
				}
				continue
			}
			for ev := range w.ResultChan() {
				switch ev.Type {
				case watch.Deleted:
					signal()
				case watch.Added, watch.Modified:
					if lease, ok := ev.Object.(*coordinationv1.Lease); ok {
						rv = lease.ResourceVersion
						if HolderOf(lease).Identity == "" {
							signal()
						}
					}
				case watch.Error:
					rv = ""
				}
			}
			w.Stop()
		}
	}()
	return ch
}

// Held is the lock, taken. Renewal goes on in the background until Release.
type Held struct {
	// Previous is the holder whose expired lease was taken over; zero when the lock was
	// free (or released).
	Previous Holder
	// Observed is the Lease's resourceVersion as read just before it was taken ("" when
	// there was none): equal to what a plan read (Peek), no other writer held it since.
	Observed string
	// Acquired is when the lock was taken (its write answered); Waited how long Acquire
	// took until then.
	Acquired time.Time
	Waited   time.Duration

	s *state
	e *elector
	l *Locker
	p Periods
	// clock, when set, replaces time.Now for the fence (tests).
	clock func() time.Time
}

// Check is the write fence: nil while the lock is held and its last renewal is recent
// enough that no waiter can have taken it over (sent less than the renew deadline ago);
// else the *LostError, and the lock counts as lost from then on. It makes no request.
func (h *Held) Check() error {
	_, err := h.Fence()
	return err
}

// Fence is Check, with the moment the fence trips unless the lock is renewed first: its
// last renewal plus the renew deadline, the lease's earliest expiry (as any waiter sees
// it) less the margin LeaseDuration - RenewDeadline (5 s). A write sent now gets it as its
// deadline (kube.WritePermit), so that none is still in flight when a waiter may take over.
func (h *Held) Fence() (time.Time, error) {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost != nil {
		return time.Time{}, s.lost
	}
	if s.released {
		return time.Time{}, errors.New("the cluster lock was released: nothing more may be written")
	}
	fence := s.renewedAt.Add(h.p.RenewDeadline)
	if now := h.now(); !now.Before(fence) {
		s.lose(fmt.Sprintf("it was not renewed for %s (the renew deadline is %s), so another writer may have taken it over",
			roundDuration(now.Sub(s.renewedAt)), h.p.RenewDeadline), nil, s.lastErr)
		return time.Time{}, s.lost
	}
	return fence, nil
}

// now is the fence's clock (a test's fake one, when set).
func (h *Held) now() time.Time {
	if h.clock != nil {
		return h.clock()
	}
	return time.Now()
}

// Done is closed when the lock is lost; Err then says how.
func (h *Held) Done() <-chan struct{} { return h.s.lostCh }

// Err is the *LostError once the lock is lost, else nil.
func (h *Held) Err() error {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if h.s.lost == nil {
		return nil
	}
	return h.s.lost
}

// Renewals counts the renewals that succeeded.
func (h *Held) Renewals() int {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.s.renewals
}

// Identity is the holder identity the lock is held under.
func (h *Held) Identity() string { return h.s.self.Identity }

// Release stops the renewal and gives the lock up with one write (the Lease without a
// holder, as client-go releases), so that a waiter takes it at once. A lock already lost
// is left alone. It has its own deadline: it runs after Ctrl-C too.
func (h *Held) Release() error {
	h.e.stop()
	s := h.s
	s.mu.Lock()
	if s.released {
		s.mu.Unlock()
		return nil
	}
	s.released = true
	lost, mine := s.lost, s.mine
	s.mu.Unlock()
	if lost != nil || mine == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(quiet(), h.p.RenewDeadline)
	defer cancel()
	leases := h.l.Leases.Leases(Namespace)
	lease := mine.DeepCopy()
	for range 3 {
		free(lease)
		_, err := leases.Update(ctx, lease, metav1.UpdateOptions{})
		if err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("releasing %s: %w", what, h.l.explain(err))
		}
		// A renewal landed after its request gave up: release what is there if it is ours.
		cur, err := leases.Get(ctx, Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("releasing %s: %w", what, h.l.explain(err))
		}
		if HolderOf(cur).Identity != s.self.Identity {
			return nil
		}
		lease = cur
	}
	return fmt.Errorf("releasing %s: it kept changing", what)
}

// free makes l a released lease: no holder, a lease of one second (client-go's release).
func free(l *coordinationv1.Lease) {
	none, one := "", int32(1)
	now := metav1.NewMicroTime(time.Now())
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = &none, &one
	l.Spec.AcquireTime, l.Spec.RenewTime = &now, &now
}

// Peek reads who holds the lock without taking it: the zero Holder when it is free (no
// Lease, or released), and the Lease's resourceVersion ("" without one). One read.
func Peek(ctx context.Context, leases coordinationv1client.LeasesGetter) (Holder, string, error) {
	l, err := leases.Leases(Namespace).Get(ctx, Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return Holder{}, "", nil
	}
	if err != nil {
		return Holder{}, "", err
	}
	return HolderOf(l), l.ResourceVersion, nil
}

// Stale says, by this machine's clock, that a holder read by Peek has not renewed for
// longer than its lease duration: probably gone (a waiter will take it over). Only for
// messages: takeover never compares clocks.
func (h Holder) Stale() bool {
	return !h.Renewed.IsZero() && h.Duration > 0 && time.Since(h.Renewed) > h.Duration
}

// state is what one run's electors and the Held share, fed by every Lease request they make.
type state struct {
	self    Holder
	ann     map[string]string
	explain func(error) error
	changed chan struct{}
	onLost  func(*LostError)
	lostCh  chan struct{}

	mu sync.Mutex
	// answered: a Lease request got an answer (errors after it are retried, not fatal,
	// until they have lasted giveUp: failingSince is when the current run of them began).
	answered     bool
	giveUp       time.Duration
	failingSince time.Time
	// seen is the Lease as last read before it was taken; other its holder, if not us.
	seen  *coordinationv1.Lease
	other Holder
	fatal error
	// acquired: the lock is ours; prev is whose expired lease it was, observed the
	// resourceVersion it had then.
	acquired   bool
	acquiredAt time.Time
	prev       Holder
	observed   string
	mine       *coordinationv1.Lease
	renewedAt  time.Time
	renewals   int
	lastErr    error
	lost       *LostError
	released   bool
}

type snapshot struct {
	acquired   bool
	acquiredAt time.Time
	fatal      error
	other      Holder
	prev       Holder
	observed   string
	seenRV     string
	lastErr    error
}

func (s *state) snapshot() snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := snapshot{acquired: s.acquired, acquiredAt: s.acquiredAt, fatal: s.fatal, other: s.other, prev: s.prev, observed: s.observed, lastErr: s.lastErr}
	if s.seen != nil {
		snap.seenRV = s.seen.ResourceVersion
	}
	return snap
}

func (s *state) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// failing notes a failed Lease request before the lock is taken; once the cluster has not
// answered for giveUp, the Acquire ends with the error rather than waiting out --lock-timeout
// against a cluster that is gone (s.mu held).
func (s *state) failing(err error) {
	if s.acquired || !s.answered {
		return
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s.failingSince = time.Time{} // the cluster answered (a conflict, a lost race)
		return
	}
	switch {
	case s.failingSince.IsZero():
		s.failingSince = time.Now()
	case s.giveUp > 0 && time.Since(s.failingSince) > s.giveUp:
		s.fail(fmt.Errorf("the cluster stopped answering while waiting for %s (for %s): %w", what, roundDuration(time.Since(s.failingSince)), s.explain(err)))
	}
}

// fail ends an Acquire with err (before the lock is taken).
func (s *state) fail(err error) {
	if s.fatal == nil && !s.acquired {
		s.fatal = err
	}
}

// lose marks a held lock lost (s.mu held).
func (s *state) lose(why string, to *Holder, cause error) {
	if s.lost != nil || !s.acquired || s.released {
		return
	}
	s.lost = &LostError{To: to, Why: why, Cause: s.explain(cause)}
	close(s.lostCh)
	if s.onLost != nil {
		go s.onLost(s.lost)
	}
}

// renewFailed: the elector gave up renewing (client-go stops after the renew deadline).
func (s *state) renewFailed(deadline time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lose(fmt.Sprintf("it could not be renewed within the renew deadline (%s)", deadline), nil, s.lastErr)
}

func (s *state) afterGet(l *coordinationv1.Lease, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.signal()
	if err != nil && !apierrors.IsNotFound(err) {
		s.lastErr = err
		switch {
		case s.acquired: // the renew loop retries until the renew deadline
		case apierrors.IsForbidden(err):
			s.fail(&ForbiddenError{Verb: "get", Err: err})
		case !s.answered:
			s.fail(s.explain(err))
		default:
			s.failing(err)
		}
		return
	}
	s.answered, s.failingSince = true, time.Time{}
	if err != nil {
		l = nil
	}
	// client-go's LeaseLock writes its next request into the Lease it read: keep a copy.
	l = l.DeepCopy()
	h := HolderOf(l)
	if s.acquired {
		// client-go re-reads when a renewal failed, and would take a released or expired
		// lease again: for a writer, anyone else's write to the Lease means it lost it.
		switch {
		case l == nil:
			s.lose("its Lease was deleted (released by hand?)", nil, nil)
		case h.Identity != s.self.Identity:
			s.lose("another writer wrote the Lease", &h, nil)
		default:
			s.mine = l // our own renewal landed although its request failed
		}
		return
	}
	s.seen = l
	if h.Identity != s.self.Identity {
		s.other = h
	} else {
		s.other = Holder{}
	}
}

// beforeWrite refuses the elector's writes once the lock is lost or released: client-go
// would otherwise take it again.
func (s *state) beforeWrite(l *coordinationv1.Lease) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost != nil {
		return s.lost
	}
	if s.released {
		return errors.New("released")
	}
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	for k := range l.Annotations {
		if len(k) > len(annotationPrefix) && k[:len(annotationPrefix)] == annotationPrefix {
			delete(l.Annotations, k)
		}
	}
	for k, v := range s.ann {
		l.Annotations[k] = v
	}
	return nil
}

func (s *state) afterWrite(verb string, l *coordinationv1.Lease, err error, sent time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.signal()
	if err != nil {
		s.lastErr = err
		if !s.acquired && apierrors.IsForbidden(err) {
			s.fail(&ForbiddenError{Verb: verb, Err: err})
		}
		s.failing(err)
		return
	}
	s.answered, s.failingSince = true, time.Time{}
	if !s.acquired {
		s.acquired, s.acquiredAt = true, time.Now()
		if h := HolderOf(s.seen); h.Identity != s.self.Identity {
			s.prev = h
		}
		if s.seen != nil {
			s.observed = s.seen.ResourceVersion
		}
	} else {
		s.renewals++
	}
	s.mine, s.renewedAt = l, sent
}

// observed is the Lease client the electors use: every answer feeds the state, and every
// write carries this run's annotations. Why not the library's LeaseLock alone: it keeps
// the Lease it read to itself, and it would quietly take the lock again after losing it.
type observed struct {
	coordinationv1client.LeasesGetter
	s *state
}

func (o observed) Leases(ns string) coordinationv1client.LeaseInterface {
	return &observedLeases{LeaseInterface: o.LeasesGetter.Leases(ns), s: o.s}
}

type observedLeases struct {
	coordinationv1client.LeaseInterface
	s *state
}

func (c *observedLeases) Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error) {
	l, err := c.LeaseInterface.Get(ctx, name, opts)
	if err == nil {
		honour(l)
	}
	c.s.afterGet(l, err)
	return l, err
}

// honour caps the lease duration a read Lease carries at what waiters honour (Honoured):
// client-go judges a holder expired once it has seen its record unchanged for the
// duration the record says, and nothing else it reads decides that.
func honour(l *coordinationv1.Lease) {
	if l == nil || l.Spec.LeaseDurationSeconds == nil {
		return
	}
	written := time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	if h := Honoured(written); h != written {
		secs := int32(h / time.Second)
		l.Spec.LeaseDurationSeconds = &secs
	}
}

func (c *observedLeases) Create(ctx context.Context, l *coordinationv1.Lease, opts metav1.CreateOptions) (*coordinationv1.Lease, error) {
	if err := c.s.beforeWrite(l); err != nil {
		return nil, err
	}
	sent := time.Now()
	out, err := c.LeaseInterface.Create(ctx, l, opts)
	c.s.afterWrite("create", out, err, sent)
	return out, err
}

func (c *observedLeases) Update(ctx context.Context, l *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	if err := c.s.beforeWrite(l); err != nil {
		return nil, err
	}
	sent := time.Now()
	out, err := c.LeaseInterface.Update(ctx, l, opts)
	c.s.afterWrite("update", out, err, sent)
	return out, err
}
