package lock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// A lease duration above the cap is refused, naming the limit; up to it, client-go's rules
// decide as before.
func TestLeaseDurationCap(t *testing.T) {
	for _, tc := range []struct {
		lease time.Duration
		want  string // "" valid
	}{
		{0, ""}, // the fixed 15 s
		{15 * time.Second, ""},
		{MaxLeaseDuration, ""},
		{61 * time.Second, "lock lease duration 1m1s is above the limit of 60s"},
		{2 * time.Hour, "lock lease duration 2h0m0s is above the limit of 60s"},
		{24 * time.Hour, "lock lease duration 24h0m0s is above the limit of 60s"},
	} {
		err := Periods{LeaseDuration: tc.lease}.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("lease %v: %v, want %q", tc.lease, err, tc.want)
		}
		if got, want := CheckLeaseDuration(tc.lease) == nil, tc.want == ""; got != want {
			t.Errorf("CheckLeaseDuration(%v) accepts: %v, want %v", tc.lease, got, want)
		}
	}
}

// oneLease answers every Get with a copy of its Lease (what client-go's LeaseLock reads).
type oneLease struct {
	coordinationv1client.LeaseInterface
	l *coordinationv1.Lease
}

func (o oneLease) Get(context.Context, string, metav1.GetOptions) (*coordinationv1.Lease, error) {
	return o.l.DeepCopy(), nil
}

type oneLeaseGetter struct{ oneLease }

func (g oneLeaseGetter) Leases(string) coordinationv1client.LeaseInterface { return g.oneLease }

// A waiter honours at most MaxLeaseDuration of what a holder wrote: the record client-go
// judges expiry by (read through the lock's client) carries the capped duration, and so
// does the holder as the lock's messages name it. The expiry is client-go's rule on that
// record (expired once its observer has seen it unchanged for longer than its
// leaseDurationSeconds), run on a fake clock from the moment it was first seen.
func TestWaiterHonoursAtMostTheCap(t *testing.T) {
	seen := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		written  int32 // leaseDurationSeconds, as the holder wrote it
		honoured time.Duration
	}{
		{1, time.Second},
		{15, 15 * time.Second},
		{60, 60 * time.Second},
		{61, 60 * time.Second},
		{3600, 60 * time.Second},
		{86400, 60 * time.Second},
	} {
		id, renewed := "ghost@nowhere pid 1 2026-01-02T03:04:05.000Z", metav1.NewMicroTime(seen)
		written := tc.written
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: Name},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &id, LeaseDurationSeconds: &written, AcquireTime: &renewed, RenewTime: &renewed}}
		s := &state{self: Holder{Identity: "me"}, explain: func(err error) error { return err }, changed: make(chan struct{}, 1)}
		ll := &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: Namespace, Name: Name},
			Client: observed{LeasesGetter: oneLeaseGetter{oneLease{l: lease}}, s: s}}
		record, _, err := ll.Get(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Duration(record.LeaseDurationSeconds) * time.Second; got != tc.honoured {
			t.Errorf("written %ds: client-go judges by %v, want %v", tc.written, got, tc.honoured)
		}
		if got := s.snapshot().other.Duration; got != tc.honoured {
			t.Errorf("written %ds: the holder's duration is %v, want %v", tc.written, got, tc.honoured)
		}
		expired := func(now time.Time) bool {
			return seen.Add(time.Duration(record.LeaseDurationSeconds) * time.Second).Before(now)
		}
		if expired(seen.Add(tc.honoured)) || !expired(seen.Add(tc.honoured+time.Millisecond)) {
			t.Errorf("written %ds: not taken over exactly after %v", tc.written, tc.honoured)
		}
		if tc.written > 60 && !expired(seen.Add(MaxLeaseDuration+time.Second)) {
			t.Errorf("written %ds: still valid a second past the cap", tc.written)
		}
	}
}

// heldAt is a lock taken and last renewed at renewed (its renewal request sent then), with
// the fixed periods, whose fence reads the fake clock *now.
func heldAt(renewed time.Time, now *time.Time) *Held {
	s := &state{self: Holder{Identity: "me"}, explain: func(err error) error { return err }, changed: make(chan struct{}, 1),
		lostCh: make(chan struct{}), acquired: true, renewedAt: renewed}
	return &Held{s: s, p: Periods{}.withDefaults(), clock: func() time.Time { return *now }}
}

// A write's deadline (Fence) is inside the margin before a waiter may take over: never
// later than the lease's earliest expiry (last renewal + lease duration) minus the 5 s
// margin, however close to the fence it starts; at the fence the lock is lost.
func TestFenceDeadline(t *testing.T) {
	renewed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	expiry := renewed.Add(LeaseDuration)
	fence := renewed.Add(RenewDeadline)
	if margin := LeaseDuration - RenewDeadline; margin != 5*time.Second {
		t.Fatalf("the margin is %v, want 5s", margin)
	}
	for _, tc := range []struct {
		name string
		at   time.Time // when the write starts
		lost bool
	}{
		{"just after the renewal", renewed, false},
		{"a retry period after it", renewed.Add(RetryPeriod), false},
		{"1 s before the fence", fence.Add(-time.Second), false},
		{"1 ms before the fence", fence.Add(-time.Millisecond), false},
		{"at the fence", fence, true},
		{"1 s past the fence", fence.Add(time.Second), true},
	} {
		now := tc.at
		h := heldAt(renewed, &now)
		deadline, err := h.Fence()
		var lost *LostError
		switch {
		case tc.lost && !errors.As(err, &lost):
			t.Errorf("%s: %v, want the lock lost", tc.name, err)
		case tc.lost && h.Check() == nil:
			t.Errorf("%s: the lock lets writes through after its fence tripped", tc.name)
		case !tc.lost && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !tc.lost && deadline.After(expiry.Add(-5*time.Second)):
			t.Errorf("%s: deadline %v, later than the expiry minus 5 s (%v)", tc.name, deadline, expiry.Add(-5*time.Second))
		case !tc.lost && !deadline.After(now):
			t.Errorf("%s: deadline %v not after the start %v", tc.name, deadline, now)
		}
	}
	// A renewal moves the fence: the next write gets the later deadline.
	now := fence.Add(-time.Second)
	h := heldAt(renewed, &now)
	h.s.renewedAt = now
	if d, err := h.Fence(); err != nil || !d.Equal(now.Add(RenewDeadline)) {
		t.Errorf("after a renewal: deadline %v (%v), want %v", d, err, now.Add(RenewDeadline))
	}
}
