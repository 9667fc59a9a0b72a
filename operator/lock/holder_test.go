package lock

import (
	"errors"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func leaseOf(h Holder) *coordinationv1.Lease {
	id, d := h.Identity, int32(15)
	now := metav1.NewMicroTime(time.Now())
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Annotations: h.annotations()},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &id, LeaseDurationSeconds: &d, AcquireTime: &now, RenewTime: &now}}
}

// A holder reads back from its Lease whole: identity, who, what for, and the lease times.
func TestHolderRoundTrip(t *testing.T) {
	self := Self("istioctl upgrade", "install", "canary", "istio-system", "demo", "1.30.0")
	if !strings.Contains(self.Identity, self.User+"@"+self.Host+" pid ") {
		t.Fatalf("identity %q", self.Identity)
	}
	got := HolderOf(leaseOf(self))
	if got.Identity != self.Identity || got.User != self.User || got.Host != self.Host || got.PID != self.PID ||
		got.Command != "istioctl upgrade" || got.Action != "install" || got.Revision != "canary" || got.Namespace != "istio-system" ||
		got.Profile != "demo" || got.Version != "1.30.0" || !got.Started.Equal(self.Started) || got.Duration != 15*time.Second || got.Acquired.IsZero() {
		t.Errorf("read back %+v\nwrote %+v", got, self)
	}
	if want := "istioctl upgrade (revision canary) of " + self.User + "@" + self.Host + ", pid "; !strings.HasPrefix(got.String(), want) {
		t.Errorf("String() = %q, want %q...", got, want)
	}
}

// Annotations another run left (a released lease, then someone else's identity) do not
// describe the new holder; a lease without a holder names none.
func TestHolderOfForeignLease(t *testing.T) {
	old := Self("istioctl install", "install", "", "istio-system", "", "1.30.0")
	l := leaseOf(old)
	other := "kube-controller-manager-xyz"
	l.Spec.HolderIdentity = &other
	h := HolderOf(l)
	if h.Identity != other || h.User != "" || h.String() != `"kube-controller-manager-xyz"` {
		t.Errorf("foreign holder read as %+v (%s)", h, h)
	}
	none := ""
	l.Spec.HolderIdentity = &none
	if h := HolderOf(l); h.Identity != "" {
		t.Errorf("released lease names %+v", h)
	}
	if h := HolderOf(nil); h.Identity != "" {
		t.Errorf("no lease names %+v", h)
	}
}

func TestPeriods(t *testing.T) {
	for _, tc := range []struct {
		p       Periods
		wantErr string
	}{
		{Periods{}, ""},
		{Periods{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 300 * time.Millisecond}, ""},
		{Periods{LeaseDuration: 2500 * time.Millisecond, RenewDeadline: time.Second, RetryPeriod: 100 * time.Millisecond}, "whole seconds"},
		{Periods{LeaseDuration: 2 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 100 * time.Millisecond}, "longer than the renew deadline"},
		{Periods{LeaseDuration: 3 * time.Second, RenewDeadline: time.Second, RetryPeriod: time.Second}, "1.2 times the retry period"},
	} {
		err := tc.p.Validate()
		if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%+v: %v, want %q", tc.p, err, tc.wantErr)
		}
	}
	if got := (Periods{}).RequestTimeout(15 * time.Second); got != 5*time.Second {
		t.Errorf("request timeout %v, want half the renew deadline", got)
	}
	if got := (Periods{}).RequestTimeout(2 * time.Second); got != 2*time.Second {
		t.Errorf("request timeout %v, want the shorter client timeout", got)
	}
}

// The errors name the holder, the Lease, and what to do.
func TestErrors(t *testing.T) {
	h := Self("istioctl install", "install", "", "istio-system", "", "1.30.0")
	h.Acquired, h.Duration = time.Now().Add(-90*time.Second), 15*time.Second
	for _, tc := range []struct {
		err  error
		want []string
	}{
		{&HeldError{Holder: h, Waited: 10 * time.Minute, Timeout: 10 * time.Minute}, []string{h.String(), "(for 1m30s)", "gave up after waiting 10m0s (--lock-timeout)",
			"Nothing was written", "15s", "kubectl delete lease -n kube-system istioctl-lock"}},
		{&HeldError{Holder: h}, []string{"not waiting: --lock-timeout is 0"}},
		{&LostError{To: &h, Why: "another writer wrote the Lease"}, []string{"lost the cluster lock (Lease kube-system/istioctl-lock): another writer wrote the Lease", "held by " + h.String(), "Nothing more was written"}},
		{&ForbiddenError{Verb: "update", Err: errors.New("forbidden")}, []string{"permission denied to update leases.coordination.k8s.io in namespace kube-system", "--skip-lock", "x precheck"}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.err.Error(), w) {
				t.Errorf("%T lacks %q:\n%v", tc.err, w, tc.err)
			}
		}
	}
}
