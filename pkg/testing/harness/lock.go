package harness

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/lock"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// HoldLock takes c's cluster lock as another istioctl upgrade would, released when the
// test ends; it returns the lock and its holder.
func HoldLock(t testing.TB, c *cluster.Cluster) (*lock.Held, lock.Holder) {
	t.Helper()
	self := lock.Self("istioctl upgrade", "install", "default", "istio-system", "demo", "1.30.0")
	held, err := (&lock.Locker{Leases: c.Kube.CoordinationV1(), Self: self}).Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = held.Release() })
	return held, self
}

// FreeLock deletes c's cluster lock's Lease now and when the test ends (a holder a test
// killed leaves it held until it expires).
func FreeLock(t testing.TB, c *cluster.Cluster) {
	t.Helper()
	del := func() {
		err := c.Kube.CoordinationV1().Leases(lock.Namespace).Delete(context.Background(), lock.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	}
	del()
	t.Cleanup(del)
}
