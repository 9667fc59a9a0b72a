package cmd_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/istioctl-installer/istioctl/operator/lock"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// The short lock periods the expiry tests give istioctl (the hidden flags, through their
// ISTIOCTL_ variables): a dead holder's lease expires in 3 s, not 15 s.
const (
	testLease = 3 * time.Second
	testRetry = 300 * time.Millisecond
)

var shortLock = []string{"ISTIOCTL_LOCK_LEASE_DURATION=3s", "ISTIOCTL_LOCK_RENEW_DEADLINE=2s", "ISTIOCTL_LOCK_RETRY_PERIOD=300ms"}

// noRetry are lock periods whose first retry comes 4 minutes after a first try: longer than
// any wait in these tests, so what such a run does after its first read of the Lease never
// comes from its retry tick (only from the watch of the Lease, or not at all).
var noRetry = []string{"ISTIOCTL_LOCK_LEASE_DURATION=6m", "ISTIOCTL_LOCK_RENEW_DEADLINE=5m", "ISTIOCTL_LOCK_RETRY_PERIOD=4m"}

// leaseVersion is one version of the lock's Lease as a watch saw it: what its writer
// recorded (holder, acquireTime, renewTime, leaseDurationSeconds).
type leaseVersion struct {
	holder            string
	acquired, renewed time.Time
	duration          time.Duration
}

// leaseHistory records every version of the lock's Lease from now until the test ends, in
// the order the apiserver wrote them: the Lease's own account of hand-overs and takeovers,
// in the writers' timestamps, which load does not move relative to each other.
type leaseHistory struct {
	mu       sync.Mutex
	versions []leaseVersion
}

func watchLease(t *testing.T, c *cluster.Cluster) *leaseHistory {
	t.Helper()
	h := &leaseHistory{}
	leases := c.Kube.CoordinationV1().Leases(lock.Namespace)
	sel := fields.OneTermEqualSelector("metadata.name", lock.Name).String()
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
		rv := list.ResourceVersion
		for ctx.Err() == nil {
			w, err := leases.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: rv})
			if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
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

func (h *leaseHistory) add(l *coordinationv1.Lease) {
	var v leaseVersion
	if s := l.Spec.HolderIdentity; s != nil {
		v.holder = *s
	}
	if l.Spec.AcquireTime != nil {
		v.acquired = l.Spec.AcquireTime.Time
	}
	if l.Spec.RenewTime != nil {
		v.renewed = l.Spec.RenewTime.Time
	}
	if l.Spec.LeaseDurationSeconds != nil {
		v.duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.versions = append(h.versions, v)
}

// all is every version recorded so far.
func (h *leaseHistory) all() []leaseVersion {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]leaseVersion(nil), h.versions...)
}

// takeover finds, in the recorded versions, the last one a holder wrote (its pid in its
// identity) before another holder's first, and that first one of the taker's.
func (h *leaseHistory) takeover(holderPID, takerPID string) (last, first leaseVersion, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, v := range h.versions {
		switch {
		case strings.Contains(v.holder, holderPID+" "):
			last = v
		case strings.Contains(v.holder, takerPID+" ") && !last.renewed.IsZero():
			return last, v, true
		}
	}
	return last, first, false
}

// leaseRequests counts, through a proxy of the cluster's API, a run's requests for the lock's
// Lease, with their answers: what the run did, which load cannot change.
type leaseRequests struct {
	mu sync.Mutex
	// reads are the GETs of the Lease (watches aside) answered 200 before the first write
	// of it that succeeded; failedWrites its writes answered otherwise before that one.
	reads, failedWrites int
	taken               bool
}

// countLeaseRequests is a kubeconfig for istioctl that goes through a proxy counting its
// requests to the lock's Lease (harness.Proxy, with the admin credentials).
func countLeaseRequests(t *testing.T, c *cluster.Cluster) (string, *leaseRequests) {
	t.Helper()
	n := &leaseRequests{}
	lease := "/apis/coordination.k8s.io/v1/namespaces/" + lock.Namespace + "/leases/" + lock.Name
	kubeconfig := harness.Proxy(t, c, nil, func(r *http.Request, status int) {
		if r.URL.Path != lease {
			return
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		switch ok := status/100 == 2; {
		case n.taken:
		case r.Method == http.MethodGet && ok:
			n.reads++
		case r.Method == http.MethodGet:
		case ok:
			n.taken = true
		default:
			n.failedWrites++
		}
	})
	return kubeconfig, n
}

func (n *leaseRequests) counts() (reads, failedWrites int, taken bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.reads, n.failedWrites, n.taken
}

// streamEvent is one line of an -o json stream, as far as the lock tests read it.
type streamEvent struct {
	Time    time.Time `json:"time"`
	Type    string    `json:"type"`
	Status  string    `json:"status"`
	Object  string    `json:"object"`
	Holder  string    `json:"holder"`
	Message string    `json:"message"`
	Error   string    `json:"error"`
}

// writes says the event reports a write (or an object found unchanged on the way to one).
func (e streamEvent) writes() bool { return e.Type == "applied" || e.Type == "pruned" }

// firstWrite matches a stream's first applied or pruned event.
func firstWrite(line string) bool {
	return strings.Contains(line, `"type":"applied"`) || strings.Contains(line, `"type":"pruned"`)
}

// lockWaiting matches the lock event of a writer that waits.
func lockWaiting(line string) bool {
	return strings.Contains(line, `"type":"lock"`) && strings.Contains(line, `"status":"waiting"`)
}

// first is the first event that matches, or the zero event.
func first(evs []streamEvent, match func(streamEvent) bool) (streamEvent, bool) {
	for _, e := range evs {
		if match(e) {
			return e, true
		}
	}
	return streamEvent{}, false
}

func last(evs []streamEvent, match func(streamEvent) bool) (streamEvent, bool) {
	for i := len(evs) - 1; i >= 0; i-- {
		if match(evs[i]) {
			return evs[i], true
		}
	}
	return streamEvent{}, false
}

func isType(typ string) func(streamEvent) bool {
	return func(e streamEvent) bool { return e.Type == typ }
}

func isLock(status string) func(streamEvent) bool {
	return func(e streamEvent) bool { return e.Type == "lock" && e.Status == status }
}

// oneAtATime checks, from the runs' -o json streams, that no run's applied or pruned
// event falls between another's first write and its (last) done, and returns the runs
// that wrote, in the order they did.
func oneAtATime(t *testing.T, streams map[string][]streamEvent) []string {
	t.Helper()
	type window struct{ from, to time.Time }
	windows := map[string]window{}
	var order []string
	for name, evs := range streams {
		w, ok := first(evs, streamEvent.writes)
		if !ok {
			continue
		}
		d, ok := last(evs, isType("done"))
		if !ok {
			t.Errorf("%s: wrote, and has no done event", name)
			continue
		}
		windows[name] = window{w.Time, d.Time}
		order = append(order, name)
	}
	for a, evs := range streams {
		for b, w := range windows {
			if a == b {
				continue
			}
			for _, e := range evs {
				if e.writes() && !e.Time.Before(w.from) && !e.Time.After(w.to) {
					t.Errorf("%s's %s %s %s at %s falls inside %s's run (%s to %s): two writers at once",
						a, e.Type, e.Object, e.Status, e.Time.Format(time.StampMicro), b, w.from.Format(time.StampMicro), w.to.Format(time.StampMicro))
				}
			}
		}
	}
	sort.Slice(order, func(i, j int) bool { return windows[order[i]].from.Before(windows[order[j]].from) })
	return order
}

// leaseClient reaches the test cluster's Leases.
func leaseClient(t *testing.T, c *cluster.Cluster) coordinationv1client.LeasesGetter {
	t.Helper()
	return c.Kube.CoordinationV1()
}

// deleteLock removes the cluster lock's Lease (a test that killed a holder leaves it).
func deleteLock(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	err := c.Kube.CoordinationV1().Leases(lock.Namespace).Delete(context.Background(), lock.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// holdLock takes the cluster lock as another istioctl would, released when the test ends.
func holdLock(t *testing.T, c *cluster.Cluster) (*lock.Held, lock.Holder) {
	t.Helper()
	self := lock.Self("istioctl upgrade", "install", "default", "istio-system", "demo", "1.30.0")
	held, err := (&lock.Locker{Leases: leaseClient(t, c), Self: self}).Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = held.Release() })
	return held, self
}

// pidOf is how a holder's pid appears in its name.
func pidOf(p *harness.Process) string { return fmt.Sprintf("pid %d", p.Cmd.Process.Pid) }
