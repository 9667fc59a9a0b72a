package cmd_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
