package lock_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/istioctl-installer/istioctl/operator/lock"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

func TestMain(m *testing.M) { cluster.Main(m) }

// short are periods that keep the expiry tests fast.
var short = lock.Periods{LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 250 * time.Millisecond}

// noRetry are periods whose first retry comes 45 s after a first try (the lease is at the
// 60 s cap): longer than any wait they are used with here (40 s), so whatever a locker with
// them does after its first read came from something else (the watch of the Lease, a fresh
// elector), never from its retry tick.
var noRetry = lock.Periods{LeaseDuration: 60 * time.Second, RenewDeadline: 55 * time.Second, RetryPeriod: 45 * time.Second}

// counter counts the requests that pass through it: reads (GET but watches), watches and
// writes; okReads are the reads answered 200, failedWrites the writes not answered 2xx.
type counter struct {
	next                                     http.RoundTripper
	n, reads, watches, okReads, failedWrites atomic.Int64
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	read, watch := r.Method == http.MethodGet && r.URL.Query().Get("watch") != "true", r.Method == http.MethodGet && r.URL.Query().Get("watch") == "true"
	switch {
	case read:
		c.reads.Add(1)
	case watch:
		c.watches.Add(1)
	}
	resp, err := c.next.RoundTrip(r)
	ok := err == nil && resp.StatusCode/100 == 2
	switch {
	case read && ok:
		c.okReads.Add(1)
	case !read && !watch && !ok:
		c.failedWrites.Add(1)
	}
	return resp, err
}

func (c *counter) WrappedRoundTripper() http.RoundTripper { return c.next }

// leases is a Lease client of the test cluster (as user, when set), counting its requests.
func leases(t *testing.T, c *cluster.Cluster, user string) (coordinationv1client.LeasesGetter, *counter) {
	t.Helper()
	cfg := rest.CopyConfig(c.Config)
	cfg.Timeout = short.RequestTimeout(5 * time.Second)
	cfg.Impersonate.UserName = user
	n := &counter{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { n.next = rt; return n })
	cl, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cl, n
}

// fresh removes the Lease now and when the test ends.
func fresh(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	del := func() {
		err := c.Kube.CoordinationV1().Leases(lock.Namespace).Delete(context.Background(), lock.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	del()
	t.Cleanup(del)
}

func locker(t *testing.T, c *cluster.Cluster, command string, wait time.Duration) *lock.Locker {
	cl, _ := leases(t, c, "")
	return &lock.Locker{Leases: cl, Self: lock.Self(command, "install", "default", "istio-system", "demo", "1.30.0"), Periods: short, Wait: wait}
}

func TestHolderAndWaiterE2E(t *testing.T) {
	c := cluster.Get(t)
	fresh(t, c)
	ctx := context.Background()
	a := locker(t, c, "istioctl install", 0)
	held, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if held.Previous.Identity != "" || held.Observed != "" {
		t.Errorf("a fresh lock: previous %+v, observed %q", held.Previous, held.Observed)
	}
	// Peek names the holder, with what it runs.
	cl, _ := leases(t, c, "")
	h, rv, err := lock.Peek(ctx, cl)
	if err != nil || h.Identity != a.Self.Identity || rv == "" {
		t.Fatalf("peek: %+v %q %v", h, rv, err)
	}
	if s := h.String(); !strings.Contains(s, "istioctl install (revision default) of ") || !strings.Contains(s, a.Self.Host) {
		t.Errorf("holder named %q", s)
	}

	// --lock-timeout 0: fails at once, naming the holder. "At once" as counted, not timed
	// (load cannot add requests): its first read decided, with no write, no watch and no
	// second read (with noRetry its retry would come 45 s later).
	bl, bn := leases(t, c, "")
	b := &lock.Locker{Leases: bl, Self: lock.Self("istioctl upgrade", "install", "default", "istio-system", "demo", "1.30.0"), Periods: noRetry}
	_, err = b.Acquire(ctx)
	var heldErr *lock.HeldError
	if !errors.As(err, &heldErr) || heldErr.Holder.Identity != a.Self.Identity || !strings.Contains(err.Error(), "not waiting: --lock-timeout is 0") {
		t.Fatalf("second writer: %v", err)
	}
	if n, reads, watches := bn.n.Load(), bn.reads.Load(), bn.watches.Load(); n != 1 || reads != 1 || watches != 0 {
		t.Errorf("--lock-timeout 0 sent %d requests (%d reads, %d watches), want its one read", n, reads, watches)
	}

	// A waiter sees the holder once and takes the lock when it is released: the watch
	// wakes it, not its next retry. Judged by the path taken, not by a time load could
	// stretch: with noRetry its first retry would come after its 40 s wait has ended,
	// so only the watch can hand it the lock; and it reads the Lease exactly twice (its
	// first try, and the fresh elector's try the release's watch event starts): the
	// holder's renewals, also seen by the watch, wake nothing.
	wl, wn := leases(t, c, "")
	w := &lock.Locker{Leases: wl, Self: lock.Self("istioctl upgrade", "install", "default", "istio-system", "demo", "1.30.0"), Periods: noRetry, Wait: 40 * time.Second}
	var mu sync.Mutex
	var waitedFor []string
	waiting := make(chan struct{})
	w.Waiting = func(h lock.Holder, _ time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if waitedFor = append(waitedFor, h.Identity); len(waitedFor) == 1 {
			close(waiting)
		}
	}
	got := make(chan *lock.Held, 1)
	go func() {
		h, err := w.Acquire(ctx)
		if err != nil {
			t.Errorf("the waiter did not get the lock before its retry could come: %v", err)
		}
		got <- h
	}()
	select {
	case <-waiting:
	case wh := <-got:
		t.Fatalf("the waiter did not wait: %+v", wh)
	}
	time.Sleep(4 * short.RetryPeriod) // a few of the holder's renewals: none may wake the waiter
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	wh := <-got
	if wh == nil {
		t.FailNow()
	}
	t.Logf("handed over after waiting %v; the waiter's requests: %d reads, %d watches", wh.Waited.Round(time.Millisecond), wn.reads.Load(), wn.watches.Load())
	if reads, watches := wn.reads.Load(), wn.watches.Load(); reads != 2 || watches < 1 {
		t.Errorf("the waiter read the Lease %d times and watched it %d times, want 2 reads (its first, and one after the release) and a watch", reads, watches)
	}
	if wh.Previous.Identity != "" {
		t.Errorf("a released lock counts as taken over from %+v", wh.Previous)
	}
	mu.Lock()
	if len(waitedFor) != 1 || waitedFor[0] != a.Self.Identity {
		t.Errorf("waited for %v, want the holder once", waitedFor)
	}
	mu.Unlock()
	if err := held.Check(); err == nil {
		t.Error("a released lock still lets its holder write")
	}
	if err := wh.Release(); err != nil {
		t.Fatal(err)
	}
}

// A Lease whose holder never renews (it died) is taken over once the waiter has seen it
// unrenewed for its lease duration, and the takeover names it.
func TestTakeOverExpiredE2E(t *testing.T) {
	c := cluster.Get(t)
	fresh(t, c)
	ctx := context.Background()
	dead := locker(t, c, "istioctl install", 0)
	held, err := dead.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held.Abandon() // as if killed: no renewal, no release

	wl, wn := leases(t, c, "")
	w := &lock.Locker{Leases: wl, Self: lock.Self("istioctl upgrade", "install", "default", "istio-system", "demo", "1.30.0"), Periods: short, Wait: time.Minute}
	wh, err := w.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	okReads, failedWrites := wn.okReads.Load(), wn.failedWrites.Load()
	t.Logf("took over after %v, with %d reads answered and %d failed writes", wh.Waited.Round(time.Millisecond), okReads, failedWrites)
	// Not early, from the Lease's own timestamps (both written by the writers, so load
	// cannot move them relative to each other): the taker's acquireTime is at least the
	// dead holder's leaseDurationSeconds after its last renewTime. (client-go judges expiry
	// from its first sight of the record, which came after that renewal.)
	now, _, err := lock.Peek(ctx, wl)
	if err != nil || now.Identity != w.Self.Identity {
		t.Fatalf("after the takeover the Lease names %+v (%v)", now, err)
	}
	if dead := wh.Previous; dead.Renewed.IsZero() || dead.Duration != short.LeaseDuration || now.Acquired.Sub(dead.Renewed) < dead.Duration {
		t.Errorf("taken over at %s, the dead holder renewed at %s for %v: before its lease expired",
			now.Acquired.Format(time.StampMicro), dead.Renewed.Format(time.StampMicro), dead.Duration)
	}
	// Not late, counted rather than timed: each try of the waiter's starts at least one
	// retry period after the last one ended, and it takes over at the first that finds the
	// lease unrenewed for its duration since its first sight. So at most 1 + duration/retry
	// answered reads (8 here) find it still valid, then one takes it over; a try whose write
	// failed costs one more. Load only spaces the tries further, which lowers the count; a
	// waiter that missed the expiry would read on.
	if limit := 2 + int64(short.LeaseDuration/short.RetryPeriod) + failedWrites; okReads > limit || okReads < 2 {
		t.Errorf("took over at answered read %d, want at the first after the expiry: between 2 and %d", okReads, limit)
	}
	p := wh.Previous
	if p.Identity != dead.Self.Identity || p.Command != "istioctl install" || p.Revision != "default" || p.Namespace != "istio-system" || p.Profile != "demo" || p.PID != dead.Self.PID {
		t.Errorf("previous holder %+v, want %+v", p, dead.Self)
	}
	if err := wh.Release(); err != nil {
		t.Fatal(err)
	}
}

// A holder whose Lease someone else writes (a writer that judged it expired, or kubectl)
// has lost it: it notices at its next renewal, refuses writes, and does not take it back.
func TestLossE2E(t *testing.T) {
	c := cluster.Get(t)
	fresh(t, c)
	ctx := context.Background()
	a := locker(t, c, "istioctl install", 0)
	var lostTo atomic.Pointer[lock.LostError]
	a.Lost = func(err *lock.LostError) { lostTo.Store(err) }
	held, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := held.Check(); err != nil {
		t.Fatalf("a fresh holder may not write: %v", err)
	}
	thief := "thief"
	// The holder renews every retry period: retry on a conflict with its renewal.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := c.Kube.CoordinationV1().Leases(lock.Namespace).Get(ctx, lock.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		l.Spec.HolderIdentity = &thief
		_, err = c.Kube.CoordinationV1().Leases(lock.Namespace).Update(ctx, l, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// How it noticed (the thief's write, not its renew deadline) is what is checked; the
	// bound only catches a holder that never notices.
	select {
	case <-held.Done():
	case <-time.After(time.Minute):
		t.Fatal("the holder did not notice it lost the lock")
	}
	var lost *lock.LostError
	if err := held.Check(); !errors.As(err, &lost) || lost.To == nil || lost.To.Identity != thief {
		t.Errorf("write fence after the loss: %v", err)
	}
	time.Sleep(4 * short.RetryPeriod) // a few retry periods in which it must not take the lock back
	for deadline := time.Now().Add(time.Minute); lostTo.Load() == nil && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if lostTo.Load() == nil {
		t.Error("Lost was not called")
	}
	if h, _, _ := lock.Peek(ctx, func() coordinationv1client.LeasesGetter { cl, _ := leases(t, c, ""); return cl }()); h.Identity != thief {
		t.Errorf("the holder took the lock back: %+v", h)
	}
	if err := held.Release(); err != nil {
		t.Errorf("releasing a lost lock: %v", err)
	}
}

// A user without the Lease permissions fails at once, naming the verb.
func TestForbiddenE2E(t *testing.T) {
	c := cluster.Get(t)
	fresh(t, c)
	ctx := context.Background()
	// May read leases, not write them.
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "lock-test-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "lock-test-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: "lock-reader"}}}
	if _, err := c.Kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
		_ = c.Kube.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{})
	})
	for _, tc := range []struct{ user, verb string }{{"nobody", "get"}, {"lock-reader", "create"}} {
		cl, _ := leases(t, c, tc.user)
		l := &lock.Locker{Leases: cl, Self: lock.Self("istioctl install", "install", "", "istio-system", "", "1.30.0"), Periods: short, Wait: time.Minute}
		var forbidden *lock.ForbiddenError
		var err error
		// RBAC caches may take a moment to see the new binding.
		for range 20 {
			if _, err = l.Acquire(ctx); errors.As(err, &forbidden) && forbidden.Verb == tc.verb {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if !errors.As(err, &forbidden) || forbidden.Verb != tc.verb || !strings.Contains(err.Error(), "permission denied to "+tc.verb+" leases.coordination.k8s.io in namespace kube-system") {
			t.Errorf("%s: %v", tc.user, err)
		}
	}
}

// TestLockCost counts the lock's requests, client-side: one read and one write to take it,
// one write per renewal, one write to release it; and times taking and releasing it.
// hack/bench.sh prints its last line.
func TestLockCost(t *testing.T) {
	c := cluster.Get(t)
	ctx := context.Background()
	for _, start := range []string{"no Lease", "a released Lease"} {
		if start == "no Lease" {
			fresh(t, c)
		}
		cl, n := leases(t, c, "")
		l := &lock.Locker{Leases: cl, Self: lock.Self("istioctl install", "install", "", "istio-system", "", "1.30.0"), Periods: short}
		t0 := time.Now()
		held, err := l.Acquire(ctx)
		acquire := time.Since(t0)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // about 8 renewals at the short retry period
		t1 := time.Now()
		if err := held.Release(); err != nil {
			t.Fatal(err)
		}
		release := time.Since(t1)
		// Counted once the renewal has stopped (Release waits for it): a renewal may land
		// between any two reads made before. A write the apiserver did not answer in time
		// (a busy machine) is one more request, and the one that follows it is counted too.
		renewals, failed := held.Renewals(), n.failedWrites.Load()
		total, reads := n.n.Load(), n.reads.Load()
		// Taking it: one read and one write; each renewal one write (client-go renews once
		// at once after taking it); releasing it: one write.
		if reads != 1 || total != int64(3+renewals)+failed {
			t.Errorf("%s: %d requests (%d reads, %d failed writes) with %d renewals; want 3 + renewals + failed writes, 1 read", start, total, reads, failed, renewals)
		}
		// The time is logged, not asserted: a target lives in make bench, not in a timed test.
		t.Logf("lock cost (%s): %d requests = 3 + 1 per renewal (%d renewals); take %v + release %v = %v",
			start, total, renewals, acquire.Round(10*time.Microsecond), release.Round(10*time.Microsecond), (acquire + release).Round(10*time.Microsecond))
	}
}

// A waiter whose cluster stops answering ends with that cause once it has lasted a lease
// duration, instead of waiting out its whole --lock-timeout against a cluster that is gone.
func TestClusterGoneWhileWaitingE2E(t *testing.T) {
	c := cluster.StartPrivate(t)
	ctx := context.Background()
	held, err := locker(t, c, "istioctl install", 0).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = held // never released: its cluster goes away under it
	w := locker(t, c, "istioctl upgrade", 10*time.Minute)
	seen := make(chan struct{})
	var once sync.Once
	w.Waiting = func(lock.Holder, time.Duration) { once.Do(func() { close(seen) }) }
	done := make(chan error, 1)
	go func() { _, err := w.Acquire(ctx); done <- err }()
	select {
	case <-seen:
	case err := <-done:
		t.Fatalf("the waiter did not wait: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the waiter never saw the holder")
	}
	c.KillAPIServer(t)
	gone := time.Now()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "stopped answering") {
			t.Errorf("the waiter ended with %v, want the cluster's silence as its cause", err)
		}
		t.Logf("ended %v after the apiserver stopped: %v", time.Since(gone).Round(time.Millisecond), err)
	case <-time.After(time.Minute):
		t.Fatal("the waiter still waits a minute after its cluster stopped answering")
	}
}
