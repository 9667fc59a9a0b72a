package action_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// The cluster lock's Lease, as docs/install.md names it.
const lockNamespace, lockName = "kube-system", "istioctl-lock"

// shortLock is config(c) with a retry period short enough that a dead holder's Lease is
// taken over as soon as it expires (when is the Lease's own duration: deadHolder's lasts a
// second), and a renew deadline long enough that a loaded machine's slow renewals never
// lose the lock (700 ms did, with both cores busy).
func shortLock(c *cluster.Cluster) *action.Config {
	cfg := config(c)
	cfg.Lock = &action.LockOptions{Timeout: time.Minute, LeaseDuration: 6 * time.Second, RenewDeadline: 4 * time.Second, RetryPeriod: 200 * time.Millisecond}
	return cfg
}

// purged is the shared cluster with no Istio on it, now and again once the test is done.
func purged(t *testing.T) *cluster.Cluster {
	t.Helper()
	c := cluster.Get(t)
	purge := func() {
		if _, err := (&action.Uninstall{Config: config(c), Purge: true, Timeout: 2 * time.Minute}).Run(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	purge()
	t.Cleanup(purge)
	return c
}

// holders watches the Lease's holder from now on; stop ends the watch once the Lease is
// released (or after 5 s) and returns the holders it went through, repeats collapsed, ""
// for free (released or deleted).
func holders(t *testing.T, c *cluster.Cluster) (stop func() []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := c.Kube.CoordinationV1().Leases(lockNamespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + lockName})
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 1000)
	go func() {
		defer close(seen)
		for e := range w.ResultChan() {
			l, ok := e.Object.(*coordinationv1.Lease)
			if !ok {
				continue
			}
			h := ""
			if e.Type != watch.Deleted && l.Spec.HolderIdentity != nil {
				h = *l.Spec.HolderIdentity
			}
			seen <- h
		}
	}()
	return func() []string {
		defer cancel()
		var out []string
		deadline := time.After(5 * time.Second)
		for {
			quiet := time.After(300 * time.Millisecond)
			select {
			case h, ok := <-seen:
				if !ok {
					return out
				}
				if len(out) == 0 || out[len(out)-1] != h {
					out = append(out, h)
				}
			case <-quiet:
				if len(out) > 0 && out[len(out)-1] == "" {
					return out // released, and nothing since
				}
			case <-deadline:
				return out
			}
		}
	}
}

// TestLockReleasedOnEveryExitE2E: a run holds the cluster lock once, from before its first
// write to its end, and releases it on every way out: success, failure, a failure that
// --atomic restores (the restore under the same lock, never released in between), and a
// plan that changed. The Lease's holder is watched as the runs go.
func TestLockReleasedOnEveryExitE2E(t *testing.T) {
	c := purged(t)
	ctx := context.Background()
	installer := func(atomic bool, sets ...string) *action.Install {
		in := &action.Install{Config: config(c), Spec: spec.Options{Sets: sets}, ReadinessTimeout: 2 * time.Minute, Atomic: atomic}
		if len(sets) > 1 {
			in.ReadinessTimeout = 3 * time.Second // istiod cannot be scheduled: it fails
		}
		return in
	}
	unschedulable := []string{"profile=minimal", "components.pilot.k8s.nodeSelector.no-such-node=x"}
	for _, tc := range []struct {
		name    string
		run     func() error
		wantErr bool
	}{
		{"success", func() error { _, err := installer(false, "profile=minimal").Run(ctx, nil); return err }, false},
		{"failure", func() error { _, err := installer(false, unschedulable...).Run(ctx, nil); return err }, true},
		{"atomic restore", func() error { _, err := installer(true, unschedulable...).Run(ctx, nil); return err }, true},
		{"plan changed", func() error {
			stale := installer(false, "profile=demo")
			plan, err := stale.Plan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := installer(false, "profile=default").Run(ctx, nil); err != nil { // another writer, in between
				t.Fatal(err)
			}
			_, err = stale.Run(ctx, plan)
			var changed *action.PlanChangedError
			if !errors.As(err, &changed) {
				t.Errorf("a stale plan: %v, want a PlanChangedError", err)
			}
			return err
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stop := holders(t, c)
			err := tc.run()
			seen := stop()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			taken, want := 0, 1
			if tc.name == "plan changed" {
				want = 2 // the run in between, then the stale one
			}
			for _, h := range seen {
				if h != "" {
					taken++
				}
			}
			if taken != want || len(seen) == 0 || seen[len(seen)-1] != "" {
				t.Errorf("the Lease's holders during the run: %q; want it taken once and released at the end", seen)
			}
		})
	}
}

// deadHolder leaves the Lease as a killed istioctl install of the default revision leaves
// it: held, renewed once just now, never again. The annotations are the ones docs/install.md
// documents. It returns the holder's identity.
func deadHolder(t *testing.T, c *cluster.Cluster, pid int) string {
	t.Helper()
	return *deadLease(t, c, pid, "install", 1).Spec.HolderIdentity
}

// deadLease writes the Lease of a dead holder (ghost@nowhere, pid) that ran action and
// wrote a lease of seconds, renewed now; it returns the Lease as created.
func deadLease(t *testing.T, c *cluster.Cluster, pid int, action string, seconds int32) *coordinationv1.Lease {
	t.Helper()
	ctx := context.Background()
	leases := c.Kube.CoordinationV1().Leases(lockNamespace)
	if err := leases.Delete(ctx, lockName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	started := time.Now().UTC().Add(-time.Minute)
	id := fmt.Sprintf("ghost@nowhere pid %d %s", pid, started.Format("2006-01-02T15:04:05.000Z"))
	a := func(k string) string { return "install.istio.io/lock-" + k }
	now := metav1.NewMicroTime(time.Now())
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: lockNamespace, Name: lockName, Annotations: map[string]string{
			a("user"): "ghost", a("host"): "nowhere", a("pid"): strconv.Itoa(pid), a("command"): "istioctl " + action, a("action"): action,
			a("revision"): "default", a("namespace"): "istio-system", a("profile"): "minimal", a("version"): "1.30.0",
			a("started"): started.Format(time.RFC3339Nano)}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &id, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now},
	}
	created, err := leases.Create(ctx, l, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// TestTakeoverRecordsE2E: a writer that takes over a dead holder's expired lock writes
// the holder's run into the history as interrupted, unless the holder had recorded it
// (it died between its record and its release): then it writes nothing for it.
func TestTakeoverRecordsE2E(t *testing.T) {
	c := purged(t)
	ctx := context.Background()
	install := func() *event.Recorder {
		t.Helper()
		rec := &event.Recorder{}
		in := &action.Install{Config: shortLock(c), Spec: spec.Options{Sets: []string{"profile=minimal"}}, ReadinessTimeout: 2 * time.Minute, Events: rec}
		if _, err := in.Run(ctx, nil); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	install()
	client := harness.Client(t, c)
	store := &history.Store{Client: client, Namespace: "istio-system"}
	for i, tc := range []struct {
		name     string
		recorded bool
		want     string
	}{
		{"the run had recorded itself", true, "its run had finished (record "},
		{"the run had not", false, "its run is recorded as interrupted (record "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := deadHolder(t, c, 90000+i)
			if tc.recorded {
				r := &history.Record{Revision: "default", Time: time.Now().UTC(), ToolVersion: "1.30.0", Action: history.ActionInstall,
					Outcome: history.Succeeded, Profile: "minimal", Run: id}
				if err := store.Create(ctx, r, 0); err != nil {
					t.Fatal(err)
				}
			}
			before, err := store.List(ctx, "default")
			if err != nil {
				t.Fatal(err)
			}
			rec := install()
			var taken *event.Event
			for _, e := range rec.Of(event.Lock) {
				if e.Lock == event.LockTakenOver {
					taken = &e
				}
			}
			if taken == nil || !strings.Contains(taken.Holder, "ghost@nowhere") || !strings.Contains(taken.Message, tc.want) {
				t.Fatalf("takeover event %+v, want one naming ghost@nowhere and saying %q", taken, tc.want)
			}
			after, err := store.List(ctx, "default")
			if err != nil {
				t.Fatal(err)
			}
			var interrupted []*history.Record
			for _, r := range after[len(before):] {
				if r.Outcome == history.Interrupted {
					interrupted = append(interrupted, r)
				}
			}
			switch {
			case tc.recorded && len(interrupted) != 0:
				t.Errorf("a run that had recorded itself got an interrupted record too: %+v", interrupted[0])
			case !tc.recorded && (len(interrupted) != 1 || interrupted[0].Run != id || interrupted[0].Profile != "minimal"):
				t.Errorf("the dead run's records: %+v, want one interrupted record of run %q", interrupted, id)
			}
		})
	}
}
