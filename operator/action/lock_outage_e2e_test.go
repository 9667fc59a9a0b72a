package action_test

import (
	"context"
	"testing"
	"time"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestLockAcrossAPIServerOutageE2E: an install holds the lock and writes, a second one
// waits for it; then the apiserver is cut off from both for a fixed time: their connections
// go through a proxy the test stops and starts again, so the outage lasts what the test
// says, not what an apiserver restart takes on a loaded machine. The cut outlasts the
// holder's renew deadline, so the holder loses the lock, and stays well within the waiter's
// lease duration of failed requests, so the waiter waits on. No write of one may fall
// inside the other's run (from the order of their events); the waiter takes the lock over
// and converges. ISTIOCTL_FAULT_RUNS sets how many outages (default 2).
func TestLockAcrossAPIServerOutageE2E(t *testing.T) {
	runs := harness.FaultRuns(t, 2)
	c := purged(t)
	harness.FreeLock(t, c)
	kubeconfig, proxy := harness.StoppableKubeconfig(t, c.Kubeconfig, "")
	// The holder renews every 500 ms and gives up after 5 s without a renewal: the cut is
	// longer than both together, so it loses the lock. The waiter gives up after a lease
	// duration (15 s) of failed requests: the cut leaves 7 s of room for the test's own
	// scheduling (its sleep overshooting).
	const cut = 8 * time.Second
	periods := action.LockOptions{Timeout: action.DefaultLockTimeout, LeaseDuration: 15 * time.Second, RenewDeadline: 5 * time.Second, RetryPeriod: 500 * time.Millisecond}
	through := func(name string) *action.Config {
		cfg := lockConfig(c, name, periods, nil)
		cfg.Kube.Kubeconfig, cfg.Kube.Timeout = kubeconfig, 2*time.Second
		return cfg
	}
	ctx := context.Background()
	profiles := [][2]string{{"demo", "default"}, {"demo", "minimal"}}
	for i := range runs {
		pair, log := profiles[i%len(profiles)], &lockLog{}
		// The holder stops at its first write, from inside its event stream, until the
		// outage is over: it holds the lock (renewing it) whatever the load, so the waiter
		// always finds it held and waits, and the cut always lands inside its run.
		resume, holderLog := make(chan struct{}), log.sink("holder")
		held := event.SinkFunc(func(e event.Event) {
			holderLog.Emit(e)
			if lockWrites(e) {
				<-resume
			}
		})
		a := lockInstall(through("holder"), held, pair[0])
		aEnd := lockGo(func() error { _, err := a.Run(ctx, nil); return err })
		lockAwait(t, "the holder's first write", log.when("holder", lockWrites), 5*time.Minute)
		b := lockInstall(through("waiter"), log.sink("waiter"), pair[1])
		bEnd := lockGo(func() error { _, err := b.Run(ctx, nil); return err })
		lockAwait(t, "the waiter waiting", log.when("waiter", lockState(event.LockWaiting)), 5*time.Minute)
		proxy.Stop()
		time.Sleep(cut)
		proxy.Start(t)
		close(resume)
		errA, errB := lockAwait(t, "the holder", aEnd, 3*time.Minute), lockAwait(t, "the waiter", bEnd, 3*time.Minute)
		order := log.oneAtATime(t)
		var notes []event.LockState
		for _, e := range log.of("waiter", lockType(event.Lock)) {
			notes = append(notes, e.Lock)
		}
		t.Logf("run %d: holder (%s) %v; waiter (%s) %v; wrote in the order %v; the waiter's lock events %v", i, pair[0], errA, pair[1], errB, order, notes)
		if errB != nil {
			t.Fatalf("run %d: the waiter did not go on after the outage: %v", i, errB)
		}
		lockVerify(t, through("verify"), pair[1])
	}
}
