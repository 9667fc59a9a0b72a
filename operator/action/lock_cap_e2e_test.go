package action_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// waitingSink records a run's events and closes waiting at its first lock wait.
type waitingSink struct {
	event.Recorder
	once    sync.Once
	waiting chan struct{}
}

func (s *waitingSink) Emit(e event.Event) {
	s.Recorder.Emit(e)
	if e.Type == event.Lock && e.Lock == event.LockWaiting {
		s.once.Do(func() { close(s.waiting) })
	}
}

// TestTakeOverCappedLeaseE2E: a holder that wrote a day-long lease (leaseDurationSeconds
// 86400) and stopped renewing is taken over once it has gone unrenewed for the cap (60 s),
// not a day, and the takeover event names it. Judged by the Lease's own timestamps, not
// the test's clock: the taker's acquireTime is at least 60 s (the cap is honoured) and at
// most 65 s after the dead holder's last renewTime. That last renewal is made once the
// taker waits (its first read seen), so that no delay before the run counts.
func TestTakeOverCappedLeaseE2E(t *testing.T) {
	c := cluster.Get(t)
	harness.FreeLock(t, c)
	ctx := context.Background()
	leases := c.Kube.CoordinationV1().Leases(lockNamespace)
	dead := deadLease(t, c, 90100, "uninstall", 86400) // uninstall: no install history to write
	id := *dead.Spec.HolderIdentity

	// The taker's Lease, as first written: watched from the dead holder's version on.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	w, err := leases.Watch(wctx, metav1.ListOptions{FieldSelector: "metadata.name=" + lockName, ResourceVersion: dead.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	taken := make(chan *coordinationv1.Lease, 1)
	go func() {
		defer close(taken)
		for e := range w.ResultChan() {
			l, ok := e.Object.(*coordinationv1.Lease)
			if ok && e.Type != watch.Deleted && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != id && *l.Spec.HolderIdentity != "" {
				taken <- l
				return
			}
		}
	}()

	// The ghost's last renewal, once the taker has read its Lease and waits.
	sink := &waitingSink{waiting: make(chan struct{})}
	renewed := make(chan time.Time, 1)
	go func() {
		defer close(renewed)
		select {
		case <-sink.waiting:
		case <-wctx.Done():
			return
		}
		var last time.Time
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			l, err := leases.Get(ctx, lockName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			now := metav1.NewMicroTime(time.Now())
			l.Spec.RenewTime = &now
			out, err := leases.Update(ctx, l, metav1.UpdateOptions{})
			if err == nil {
				last = out.Spec.RenewTime.Time
			}
			return err
		})
		if err != nil {
			t.Errorf("renewing the dead holder's lease: %v", err)
			return
		}
		renewed <- last
	}()

	cfg := config(c)
	cfg.Lock = &action.LockOptions{Timeout: 3 * time.Minute, LeaseDuration: 6 * time.Second, RenewDeadline: 4 * time.Second, RetryPeriod: 200 * time.Millisecond}
	if _, err := (&action.Uninstall{Config: cfg, Spec: spec.Options{Revision: "nothing-here"}, IgnoreNotFound: true, Events: sink}).Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var takeover *event.Event
	for _, e := range sink.Of(event.Lock) {
		if e.Lock == event.LockTakenOver {
			takeover = &e
		}
	}
	if takeover == nil || !strings.Contains(takeover.Holder, "ghost@nowhere, pid 90100") || !strings.Contains(takeover.Message, "ghost@nowhere, pid 90100") {
		t.Fatalf("takeover event %+v, want one naming ghost@nowhere, pid 90100", takeover)
	}
	last, ok := <-renewed
	if !ok {
		t.Fatal("the taker never waited for the dead holder")
	}
	l, ok := <-taken
	if !ok || l.Spec.AcquireTime == nil {
		t.Fatal("the taker's Lease was not seen")
	}
	after := l.Spec.AcquireTime.Sub(last)
	t.Logf("taken over %v after the dead holder's last renewal (it wrote a lease of %ds)", after.Round(time.Millisecond), *dead.Spec.LeaseDurationSeconds)
	if after < 60*time.Second || after > 65*time.Second {
		t.Errorf("taken over %v after the last renewTime (%s, acquireTime %s), want between 60 s (the cap) and 65 s",
			after, last.Format(time.StampMicro), l.Spec.AcquireTime.Format(time.StampMicro))
	}
}
