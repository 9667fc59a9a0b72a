package action_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/lock"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// The lock periods of the racing runs: lockShort lets a dead holder's lease expire in 3 s;
// lockNoRetry (its lease at the 60 s cap) first retries 45 s after a first try, longer than
// any wait it is used with here (40 s), so
// what such a run does after its first read of the Lease never comes from its retry tick
// (only from the watch of the Lease, or not at all).
var (
	lockShort   = action.LockOptions{Timeout: action.DefaultLockTimeout, LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 300 * time.Millisecond}
	lockNoRetry = action.LockOptions{Timeout: action.DefaultLockTimeout, LeaseDuration: 60 * time.Second, RenewDeadline: 55 * time.Second, RetryPeriod: 45 * time.Second}
)

// lockTripper puts fn in front of a client's transport (fn sends with next).
type lockTripper struct {
	next http.RoundTripper
	fn   func(*http.Request, http.RoundTripper) (*http.Response, error)
}

func (l lockTripper) RoundTrip(r *http.Request) (*http.Response, error) { return l.fn(r, l.next) }
func (l lockTripper) WrappedRoundTripper() http.RoundTripper            { return l.next }

// lockConfig is config(c) for one racing run, its own client and lock: named "istioctl
// <name>" to the other writers (in-process runs share a pid), with the lock options o, and
// its requests through fn when fn is not nil (the Lease's too).
func lockConfig(c *cluster.Cluster, name string, o action.LockOptions, fn func(*http.Request, http.RoundTripper) (*http.Response, error)) *action.Config {
	cfg := config(c)
	o.Command = "istioctl " + name
	cfg.Lock = &o
	if fn != nil {
		cfg.NewClient = func() (*kube.Client, error) {
			rc := rest.CopyConfig(c.Config)
			rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { return lockTripper{rt, fn} })
			return kube.NewClientForConfig(rc, ownership.KubeOptions()...)
		}
	}
	return cfg
}

// lockInstall is an install of profile (and sets) reporting to events.
func lockInstall(cfg *action.Config, events event.Sink, profile string, sets ...string) *action.Install {
	return &action.Install{Config: cfg, Spec: spec.Options{Sets: append([]string{"profile=" + profile}, sets...)},
		ReadinessTimeout: 2 * time.Minute, Events: events}
}

// lockLog keeps the events of racing runs in the one order they were emitted: who wrote
// when is judged from that order, never from a clock.
type lockLog struct {
	mu    sync.Mutex
	evs   []lockEvent
	waits []lockWait
}

type lockEvent struct {
	run string
	event.Event
}

type lockWait struct {
	run   string
	match func(event.Event) bool
	ch    chan struct{}
}

// sink is run's event sink.
func (l *lockLog) sink(run string) event.Sink {
	return event.SinkFunc(func(e event.Event) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.evs = append(l.evs, lockEvent{run, e})
		kept := l.waits[:0]
		for _, w := range l.waits {
			if w.run == run && w.match(e) {
				close(w.ch)
			} else {
				kept = append(kept, w)
			}
		}
		l.waits = kept
	})
}

// when is closed once run has emitted an event that matches.
func (l *lockLog) when(run string, match func(event.Event) bool) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan struct{})
	if l.index(run, match, false) >= 0 {
		close(ch)
		return ch
	}
	l.waits = append(l.waits, lockWait{run, match, ch})
	return ch
}

// index is the place in the log of run's first (or last) event that matches; -1 for none.
// The caller holds mu.
func (l *lockLog) index(run string, match func(event.Event) bool, last bool) int {
	at := -1
	for i, e := range l.evs {
		if e.run == run && match(e.Event) {
			if at = i; !last {
				break
			}
		}
	}
	return at
}

// at is index, locked.
func (l *lockLog) at(run string, match func(event.Event) bool, last bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.index(run, match, last)
}

// of is run's events that match.
func (l *lockLog) of(run string, match func(event.Event) bool) []event.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []event.Event
	for _, e := range l.evs {
		if e.run == run && match(e.Event) {
			out = append(out, e.Event)
		}
	}
	return out
}

// oneAtATime checks that no run's applied or pruned event falls between another's first
// write and its (last) done, and returns the runs that wrote, in the order they did.
func (l *lockLog) oneAtATime(t *testing.T) []string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var order []string
	for _, e := range l.evs {
		if lockWrites(e.Event) && !contains(order, e.run) {
			order = append(order, e.run)
		}
	}
	for _, run := range order {
		from, to := l.index(run, lockWrites, false), l.index(run, lockType(event.Done), true)
		if to < from {
			t.Errorf("%s: wrote, and has no done event after it", run)
			continue
		}
		for i := from; i <= to; i++ {
			if e := l.evs[i]; e.run != run && lockWrites(e.Event) {
				t.Errorf("%s's %s %s (event %d) falls inside %s's run (events %d to %d): two writers at once", e.run, e.Type, e.Object, i, run, from, to)
			}
		}
	}
	return order
}

// lockWrites says the event reports a write (or an object found unchanged on the way to one).
func lockWrites(e event.Event) bool { return e.Type == event.Applied || e.Type == event.Pruned }

func lockType(typ event.Type) func(event.Event) bool {
	return func(e event.Event) bool { return e.Type == typ }
}

func lockState(s event.LockState) func(event.Event) bool {
	return func(e event.Event) bool { return e.Type == event.Lock && e.Lock == s }
}

// lockGo runs fn in a goroutine; lockAwait takes its error.
func lockGo(fn func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- fn() }()
	return ch
}

// lockAwait waits for ch; the timeout only bounds a hang.
func lockAwait[T any](t *testing.T, what string, ch <-chan T, timeout time.Duration) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(timeout):
		t.Fatalf("%s: not after %v", what, timeout)
		panic("unreachable")
	}
}

// lockLeases records every version of the lock's Lease from now until the test ends, as
// the lock package reads it: the Lease's own account of hand-overs and takeovers, in the
// timestamps its writers wrote, which load does not move relative to each other.
type lockLeases struct {
	mu       sync.Mutex
	versions []lock.Holder
}

func lockWatch(t *testing.T, c *cluster.Cluster) *lockLeases {
	t.Helper()
	h := &lockLeases{}
	leases := c.Kube.CoordinationV1().Leases(lock.Namespace)
	sel := "metadata.name=" + lock.Name
	list, err := leases.List(context.Background(), metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		h.add(&list.Items[i])
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for rv := list.ResourceVersion; ctx.Err() == nil; {
			w, err := leases.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: rv})
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				if l, ok := ev.Object.(*coordinationv1.Lease); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
					rv = l.ResourceVersion
					h.add(l)
				}
			}
			w.Stop()
		}
	}()
	return h
}

func (h *lockLeases) add(l *coordinationv1.Lease) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.versions = append(h.versions, lock.HolderOf(l))
}

// takeover is the last version the run named from wrote before the first of to's, and
// that first one.
func (h *lockLeases) takeover(from, to string) (last, first lock.Holder, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, v := range h.versions {
		switch v.Command {
		case "istioctl " + from:
			last = v
		case "istioctl " + to:
			if last.Identity != "" {
				return last, v, true
			}
		}
	}
	return last, first, false
}

// identity is the lock identity of the run named run (its first version of the Lease).
func (h *lockLeases) identity(run string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, v := range h.versions {
		if v.Command == "istioctl "+run {
			return v.Identity
		}
	}
	return ""
}

func (h *lockLeases) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var s string
	for _, v := range h.versions {
		s += fmt.Sprintf("\n  %q acquired %s renewed %s for %v", v.Command, v.Acquired.Format(time.StampMicro), v.Renewed.Format(time.StampMicro), v.Duration)
	}
	return s
}
