package action_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/lock"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestWriteLockE2E: the cluster lock every writer takes, with racing action values (each
// its own client and lock) in this process against the shared cluster. Who held the lock
// when is judged from the order of their events and the Lease's own timestamps.
func TestWriteLockE2E(t *testing.T) {
	c := purged(t)
	harness.FreeLock(t, c)
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *cluster.Cluster)
	}{
		{"one writer at a time", lockOneWriter},
		{"lock-timeout 0 and readers", lockTimeoutZero},
		{"killed holder", lockKilledHolder},
		{"stopped holder", lockStoppedHolder},
		{"interrupted holder", lockInterruptedHolder},
		{"no permission", lockNoPermission},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, c) })
	}
}

// Three installs and an uninstall that wait for the lock at once run one after the other,
// each converges, and the history lists the installs in the order they held the lock.
func lockOneWriter(t *testing.T, c *cluster.Cluster) {
	ctx := context.Background()
	canary := lockInstall(config(c), nil, "minimal")
	canary.Spec.Revision = "canary"
	if _, err := canary.Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// The test holds the lock until all four wait for it: started at once, the fastest (the
	// uninstall renders nothing) could otherwise finish before the slowest asks.
	held, _ := harness.HoldLock(t, c)
	log := &lockLog{}
	names := []string{"default", "demo", "minimal", "uninstall canary"}
	ends := map[string]<-chan error{}
	for _, name := range names {
		cfg, sink := lockConfig(c, name, action.LockOptions{Timeout: action.DefaultLockTimeout}, nil), log.sink(name)
		if name == "uninstall canary" {
			u := &action.Uninstall{Config: cfg, Spec: spec.Options{Revision: "canary"}, Timeout: 2 * time.Minute, Events: sink}
			ends[name] = lockGo(func() error { _, err := u.Run(ctx, nil); return err })
			continue
		}
		// Without the admission dry runs their plans make before the lock: started at once,
		// they meet at the lock rather than at a time set by load.
		in := lockInstall(cfg, sink, name)
		in.SkipAdmissionCheck = true
		ends[name] = lockGo(func() error { _, err := in.Run(ctx, nil); return err })
	}
	for _, name := range names {
		lockAwait(t, name+" waiting for the lock", log.when(name, lockState(event.LockWaiting)), 5*time.Minute)
	}
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	waited := 0
	for _, name := range names {
		if err := lockAwait(t, name, ends[name], 5*time.Minute); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if w := log.of(name, lockState(event.LockWaiting)); len(w) > 0 {
			waited++
			if w[0].Holder == "" || !strings.Contains(w[0].Message, "has held it for") {
				t.Errorf("%s's waiting event does not name the holder and how long it held the lock: %+v", name, w[0])
			}
		}
	}
	order := log.oneAtATime(t)
	t.Logf("lock order: %s; %d of 4 waited", strings.Join(order, ", "), waited)
	if len(order) != 4 || waited != 4 {
		t.Fatalf("%d runs wrote (want 4), %d waited for the lock (want 4)", len(order), waited)
	}
	installs := slices.DeleteFunc(slices.Clone(order), func(n string) bool { return n == "uninstall canary" })
	lockVerify(t, config(c), installs[len(installs)-1])
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod-canary", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("istiod-canary after its uninstall: %v", err)
	}
	lockNoCanary(t, c)
	var recorded []string
	for _, r := range lockHistory(t, c) {
		recorded = append(recorded, r.Profile)
	}
	if strings.Join(recorded, ",") != strings.Join(installs, ",") {
		t.Errorf("history lists profiles %v, the installs held the lock in the order %v", recorded, installs)
	}
}

// lockNoCanary fails the test if an object of revision canary's components survived.
func lockNoCanary(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	client := harness.Client(t, c)
	for _, gvk := range harness.SnapshotKinds {
		items, err := client.List(context.Background(), gvk, "")
		if err != nil {
			t.Fatalf("listing %s: %v", gvk.Kind, err)
		}
		for _, o := range items {
			if l := o.GetLabels(); l[ownership.LabelRevision] == "canary" && l[ownership.LabelComponent] != "" && o.GetKind() != "CustomResourceDefinition" {
				t.Errorf("%s of revision canary survived its uninstall", ref.Of(&o))
			}
		}
	}
}

// A re-install's only writes are the Lease's; a writer with lock timeout 0 against a held
// lock fails at once, naming the holder, having asked for nothing but the Lease; every
// writer takes the lock; the readers warn once that a write is in progress.
func lockTimeoutZero(t *testing.T, c *cluster.Cluster) {
	ctx := context.Background()
	kubeconfig, log := harness.RecordingProxy(t, c)
	proxied := func(o action.LockOptions) *action.Config {
		cfg := config(c)
		cfg.Kube.Kubeconfig, cfg.Lock = kubeconfig, &o
		return cfg
	}
	rs := lockHistory(t, c)
	log.Take()
	if res, err := lockInstall(proxied(lockNoRetry), nil, rs[len(rs)-1].Profile).Run(ctx, nil); err != nil || res.Applied != 0 {
		t.Fatalf("re-install of what is installed: %v, %+v", err, res)
	}
	for _, w := range harness.Writes(log.Take()) {
		if !strings.Contains(w, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases") {
			t.Errorf("the re-install wrote %s", w)
		}
	}

	held, holder := harness.HoldLock(t, c)
	log.Take()
	// "At once" is counted, not timed: it decides on its one read of the Lease, without a
	// watch or a second read (with lockNoRetry a retry would come 45 s later).
	zero := lockNoRetry
	zero.Timeout = 0
	_, err := lockInstall(proxied(zero), nil, "default").Run(ctx, nil)
	var heldErr *action.LockHeldError
	if !errors.As(err, &heldErr) || heldErr.Holder.Identity != holder.Identity || event.ExitCode(err) != event.ExitLocked ||
		!strings.Contains(err.Error(), holder.String()) || !strings.Contains(err.Error(), "--lock-timeout is 0") {
		t.Errorf("lock timeout 0 against a held lock: exit %d, %v", event.ExitCode(err), err)
	}
	if reqs := log.Take(); len(reqs) != 1 || !strings.HasPrefix(reqs[0], "GET /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/istioctl-lock") {
		t.Errorf("lock timeout 0 sent %v, want its one read of the Lease", reqs)
	}

	noWait := func() *action.Config { return lockConfig(c, "writer", action.LockOptions{}, nil) }
	for name, run := range map[string]func() error{
		"tag set": func() error {
			_, err := (&action.TagSet{Config: noWait(), Tag: "prod", Revision: "default"}).Run(ctx, nil)
			return err
		},
		"tag remove": func() error { return (&action.TagRemove{Config: noWait(), Tag: "default"}).Run(ctx, nil) },
		"rollback":   func() error { _, err := (&action.Rollback{Config: noWait()}).Run(ctx, nil); return err },
		"uninstall":  func() error { _, err := (&action.Uninstall{Config: noWait(), Purge: true}).Run(ctx, nil); return err },
	} {
		err := run()
		if !errors.As(err, &heldErr) || heldErr.Holder.Identity != holder.Identity || event.ExitCode(err) != event.ExitLocked {
			t.Errorf("%s against a held lock: exit %d, %v", name, event.ExitCode(err), err)
		}
	}
	// Skip writes without it, saying so.
	skip, rec := config(c), &event.Recorder{}
	skip.Lock = &action.LockOptions{Skip: true}
	_, err = (&action.Uninstall{Config: skip, Spec: spec.Options{Revision: "nothing-here"}, IgnoreNotFound: true, Events: rec}).Run(ctx, nil)
	if w := messages(rec, event.Warning); err != nil || !strings.Contains(w, "--skip-lock: writing WITHOUT the cluster lock") {
		t.Errorf("skip-lock: %v; warnings: %s", err, w)
	}
	lockReaders(t, c, holder)
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
}

// lockReaders: each read-only action warns once (Config.Warn or a warning event) that
// holder is writing.
func lockReaders(t *testing.T, c *cluster.Cluster, holder lock.Holder) {
	ctx := context.Background()
	for name, run := range map[string]func(*action.Config, event.Sink) error{
		"verify-install": func(cfg *action.Config, _ event.Sink) error { _, err := action.Verify(cfg).Run(ctx); return err },
		"history": func(cfg *action.Config, _ event.Sink) error {
			_, err := (&action.History{Config: cfg}).Run(ctx)
			return err
		},
		"precheck": func(cfg *action.Config, _ event.Sink) error { _, err := action.Precheck(cfg).Run(ctx); return err },
		"install dry run": func(cfg *action.Config, s event.Sink) error {
			in := lockInstall(cfg, s, "default")
			in.DryRun = true
			_, err := in.Run(ctx, nil)
			return err
		},
	} {
		var n atomic.Int32
		want := "a write is in progress: " + holder.String()
		cfg := config(c)
		cfg.Warn = func(msg string) {
			if strings.Contains(msg, want) {
				n.Add(1)
			}
		}
		err := run(cfg, event.SinkFunc(func(e event.Event) {
			if e.Type == event.Warning && strings.Contains(e.Message, want) {
				n.Add(1)
			}
		}))
		if n.Load() != 1 {
			t.Errorf("%s (%v): %d warnings that a write is in progress, want 1", name, err, n.Load())
		}
	}
}

// lockKilled is a transport that fails every request once kill is set: from then on the
// run reaches the cluster no more, as if its process were killed.
func lockKilled(kill *atomic.Bool) func(*http.Request, http.RoundTripper) (*http.Response, error) {
	return func(r *http.Request, next http.RoundTripper) (*http.Response, error) {
		if kill.Load() {
			return nil, errors.New("killed")
		}
		return next.RoundTrip(r)
	}
}

// A holder killed while it writes: the next writer takes its lock over once it has seen it
// unrenewed for the lease duration, names it, converges, and the history says the killed
// run was interrupted.
func lockKilledHolder(t *testing.T, c *cluster.Cluster) {
	ctx := context.Background()
	leases, log := lockWatch(t, c), &lockLog{}
	var kill atomic.Bool
	a := lockInstall(lockConfig(c, "killed", lockShort, lockKilled(&kill)), log.sink("killed"), "demo")
	aEnd := lockGo(func() error { _, err := a.Run(ctx, nil); return err })
	lockAwait(t, "the killed run's first write", log.when("killed", lockWrites), 5*time.Minute)
	kill.Store(true)
	lockAwait(t, "the killed run", aEnd, time.Minute)

	// The taker's answered reads of the Lease before its first write of it that succeeded,
	// and its writes of it that failed before that one.
	var mu sync.Mutex
	reads, failedWrites, taken := 0, 0, false
	count := func(r *http.Request, next http.RoundTripper) (*http.Response, error) {
		resp, err := next.RoundTrip(r)
		if r.URL.Path == "/apis/coordination.k8s.io/v1/namespaces/"+lock.Namespace+"/leases/"+lock.Name {
			mu.Lock()
			defer mu.Unlock()
			switch ok := err == nil && resp.StatusCode/100 == 2; {
			case taken:
			case r.Method == http.MethodGet && ok:
				reads++
			case r.Method == http.MethodGet:
			case ok:
				taken = true
			default:
				failedWrites++
			}
		}
		return resp, err
	}
	if _, err := lockInstall(lockConfig(c, "next", lockShort, count), log.sink("next"), "default").Run(ctx, nil); err != nil {
		t.Fatalf("the next writer: %v", err)
	}
	took := log.of("next", lockState(event.LockTakenOver))
	if len(took) == 0 || !strings.Contains(took[0].Holder, "istioctl killed") || !strings.Contains(took[0].Message, "recorded as interrupted") {
		t.Fatalf("no takeover naming the killed holder: %+v", log.of("next", lockType(event.Lock)))
	}
	if log.at("next", lockState(event.LockTakenOver), false) < log.at("next", lockState(event.LockWaiting), false) {
		t.Errorf("the takeover came before the wait")
	}
	// Not early, from the Lease's own record: the taker's acquireTime is at least the killed
	// holder's lease duration after its last renewTime (client-go judges expiry from its
	// first sight of the record, which came after that renewal).
	last, first, ok := leases.takeover("killed", "next")
	switch {
	case !ok:
		t.Errorf("the Lease's versions show no takeover of the killed holder by the next: %s", leases)
	case last.Duration != lockShort.LeaseDuration || first.Acquired.Sub(last.Renewed) < last.Duration:
		t.Errorf("taken over at %s, the killed holder last renewed at %s for %v: before its lease expired",
			first.Acquired.Format(time.StampMicro), last.Renewed.Format(time.StampMicro), last.Duration)
	}
	// Not late, counted rather than timed: each try starts at least a retry period after the
	// last one ended, and the first that finds the lease unrenewed for its duration since its
	// first sight takes it: at most 1 + duration/retry answered reads (11 here) find it
	// valid; a try whose write failed costs one more. Load only spaces the tries further.
	mu.Lock()
	if limit := 2 + int(lockShort.LeaseDuration/lockShort.RetryPeriod) + failedWrites; !taken || reads < 2 || reads > limit {
		t.Errorf("took over at answered read %d of the Lease (taken: %v), want at the first after its expiry: between 2 and %d", reads, taken, limit)
	}
	t.Logf("took over %v after the killed holder's last renewal (by the Lease), at read %d: %s", first.Acquired.Sub(last.Renewed).Round(time.Millisecond), reads, took[0].Message)
	mu.Unlock()
	lockVerify(t, config(c), "default")
	lockInterruptedBy(t, c, leases.identity("killed"), "demo")
}

// lockInterruptedBy fails the test unless the history's last two records are run's, as
// interrupted, with profile, then a successful install of the default profile.
func lockInterruptedBy(t *testing.T, c *cluster.Cluster, run, profile string) {
	t.Helper()
	rs := lockHistory(t, c)
	if n := len(rs); n < 2 || run == "" || rs[n-2].Outcome != history.Interrupted || rs[n-2].Run != run ||
		rs[n-2].Profile != profile || rs[n-1].Outcome != history.Succeeded || rs[n-1].Profile != "default" {
		var got []string
		for _, r := range rs {
			got = append(got, string(r.Outcome)+" "+r.Profile+" "+r.Run)
		}
		t.Errorf("history after the takeover of %q: %q", run, got)
	}
}

// A holder stopped past its lease duration, while another takes the lock over and
// finishes: continued, it writes nothing more and fails, having lost the lock. Its stop is
// a gate every request of its waits at (or until its own context ends).
func lockStoppedHolder(t *testing.T, c *cluster.Cluster) {
	ctx := context.Background()
	leases, log := lockWatch(t, c), &lockLog{}
	var mu sync.Mutex
	var stopped chan struct{} // closed to continue
	var continued bool
	var sent []string // the writes it sent once continued
	gate := func(r *http.Request, next http.RoundTripper) (*http.Response, error) {
		mu.Lock()
		wait, issuedAfter := stopped, continued
		mu.Unlock()
		if wait != nil {
			select {
			case <-wait:
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
		}
		// Only a request issued once it continued counts: one held at the gate was in
		// flight when it froze, as a frozen process's half-sent request would be.
		if issuedAfter && r.Method != http.MethodGet {
			mu.Lock()
			sent = append(sent, r.Method+" "+r.URL.Path)
			mu.Unlock()
		}
		return next.RoundTrip(r)
	}
	// It freezes while it waits for its istiod, from inside its own event stream: no write
	// of it is in flight then (the gateways wait on Pilot), so what the taker writes is
	// what the cluster keeps.
	frozen := make(chan struct{})
	stoppedLog := log.sink("stopped")
	freeze := event.SinkFunc(func(e event.Event) {
		stoppedLog.Emit(e)
		if e.Type == event.Waiting && e.Object == "Deployment/istio-system/istiod" {
			mu.Lock()
			if stopped == nil {
				stopped = make(chan struct{})
				close(frozen)
			}
			mu.Unlock()
		}
	})
	a := lockInstall(lockConfig(c, "stopped", lockShort, gate), freeze, "demo")
	aEnd := lockGo(func() error { _, err := a.Run(ctx, nil); return err })
	lockAwait(t, "the stopped run waiting for its istiod", frozen, 5*time.Minute)
	if _, err := lockInstall(lockConfig(c, "taker", lockShort, nil), log.sink("taker"), "default").Run(ctx, nil); err != nil {
		t.Fatalf("the writer taking over: %v", err)
	}
	if took := log.of("taker", lockState(event.LockTakenOver)); len(took) == 0 || !strings.Contains(took[0].Holder, "istioctl stopped") {
		t.Fatalf("no takeover of the stopped holder: %+v", log.of("taker", lockType(event.Lock)))
	}
	mu.Lock()
	continued = true
	close(stopped)
	mu.Unlock()
	err := lockAwait(t, "the continued holder", aEnd, time.Minute)
	mu.Lock()
	for _, w := range sent {
		if !strings.Contains(w, "/leases/") {
			t.Errorf("the continued holder wrote %s", w)
		}
	}
	mu.Unlock()
	if event.ExitCode(err) == event.ExitOK || !strings.Contains(fmt.Sprint(err), "lost the cluster lock") {
		t.Errorf("the continued holder: exit %d, %v", event.ExitCode(err), err)
	}
	lockVerify(t, config(c), "default")
	lockInterruptedBy(t, c, leases.identity("stopped"), "demo")
}

// Ctrl-C of a holder (its context ended): it stops at a safe point and releases the lock;
// the watch of the writer waiting for it hands it the lock, not its retry. Judged by the
// path: the waiter's wait ends 40 s after its first read, before its first retry (45 s),
// so only the watch can hand it the lock.
func lockInterruptedHolder(t *testing.T, c *cluster.Cluster) {
	ctx := context.Background()
	// From a converged install (the next writer's first stage, the CRDs, is then quick to
	// report): the holder's istiod cannot be scheduled, so it waits until interrupted.
	if _, err := lockInstall(config(c), nil, "default").Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	log := &lockLog{}
	actx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	a := lockInstall(lockConfig(c, "interrupted", action.LockOptions{Timeout: action.DefaultLockTimeout}, nil), log.sink("interrupted"),
		"default", "components.pilot.k8s.nodeSelector.no-such-node=x")
	aEnd := lockGo(func() error { _, err := a.Run(actx, nil); return err })
	lockAwait(t, "the holder's first write", log.when("interrupted", lockWrites), 5*time.Minute)
	wait := lockNoRetry
	wait.Timeout = 40 * time.Second
	b := lockInstall(lockConfig(c, "next", wait, nil), log.sink("next"), "default")
	bEnd := lockGo(func() error { _, err := b.Run(ctx, nil); return err })
	lockAwait(t, "the next writer waiting", log.when("next", lockState(event.LockWaiting)), 5*time.Minute)
	interrupt()
	if err := lockAwait(t, "the interrupted holder", aEnd, time.Minute); event.ExitCode(err) != event.ExitInterrupted {
		t.Errorf("the interrupted holder: exit %d, want %d: %v", event.ExitCode(err), event.ExitInterrupted, err)
	}
	if err := lockAwait(t, "the next writer", bEnd, 3*time.Minute); err != nil {
		t.Fatalf("the next writer (a lock error: its wait ended, the release did not wake it): %v", err)
	}
	// The order of the events: the holder's done, then the waiter's take, then its first write.
	done, taken, write := log.at("interrupted", lockType(event.Done), true), log.at("next", lockState(event.LockAcquired), false), log.at("next", lockWrites, false)
	dones := log.of("interrupted", lockType(event.Done))
	if len(dones) == 0 || dones[len(dones)-1].Result != event.RunInterrupted || taken < 0 || taken < done || write < taken {
		t.Errorf("holder's done %+v (event %d); the next writer took the lock at event %d, and first wrote at %d: want done, take, write", dones, done, taken, write)
	}
	log.oneAtATime(t)
}

// A writer that may not write the Lease fails before any write, naming the permission;
// precheck lists the Lease permissions.
func lockNoPermission(t *testing.T, c *cluster.Cluster) {
	ctx := context.Background()
	const user = "lock-test-reader"
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}}}
	if _, err := c.Kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), user, metav1.DeleteOptions{})
		_ = c.Kube.RbacV1().ClusterRoles().Delete(context.Background(), user, metav1.DeleteOptions{})
	})
	harness.Authorized(t, c, user, authv1.ResourceAttributes{Verb: "get", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system"})
	kubeconfig, log := harness.RecordingProxy(t, c)
	cfg := config(c)
	cfg.Kube.Kubeconfig, cfg.Kube.As = kubeconfig, user
	want := "permission denied to update leases.coordination.k8s.io in namespace kube-system" // the Lease exists (released)
	var err error
	for range 20 { // until the authorizer sees the new binding
		log.Take()
		if _, err = lockInstall(cfg, nil, "minimal").Run(ctx, nil); err != nil && strings.Contains(err.Error(), want) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--skip-lock") || event.ExitCode(err) == event.ExitOK {
		t.Fatalf("install without the Lease permissions: %v", err)
	}
	for _, w := range harness.Writes(log.Take()) {
		if !strings.HasPrefix(w, "PUT /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/istioctl-lock") {
			t.Errorf("a writer without the Lease permissions sent %s", w)
		}
	}
	pc := config(c)
	pc.Kube.As = user
	res, err := action.Precheck(pc).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []check.Result{
		{Code: "IST0141", Object: "Namespace/kube-system", Message: "Missing required permission to create resource leases.coordination.k8s.io"},
		{Code: "IST0141", Object: "Namespace/kube-system", Message: "Missing required permission to update resource leases.coordination.k8s.io"},
		{Passed: true, Object: "Namespace/kube-system", Message: "may get leases.coordination.k8s.io"},
	} {
		if !lockHasResult(res.Report, w) {
			t.Errorf("precheck lacks %+v", w)
		}
	}
}

// lockHasResult says rep has a result like w: its pass, code and object, its message
// starting with w's.
func lockHasResult(rep *check.Report, w check.Result) bool {
	for _, r := range rep.Results {
		if r.Passed == w.Passed && (w.Passed || r.Code == w.Code) && r.Object == w.Object && strings.HasPrefix(r.Message, w.Message) {
			return true
		}
	}
	return false
}

// lockVerify fails the test unless verify-install of profile passes.
func lockVerify(t *testing.T, cfg *action.Config, profile string) {
	t.Helper()
	v := action.Verify(cfg)
	v.Spec = &spec.Options{Sets: []string{"profile=" + profile}}
	res, err := v.Run(context.Background())
	if err != nil {
		t.Fatalf("verify-install of profile %s: %v", profile, err)
	}
	if res.Failed {
		for _, r := range res.Report.Results {
			if !r.Passed && r.Severity == check.Error {
				t.Errorf("verify-install of profile %s: %s: %s", profile, r.Object, r.Message)
			}
		}
		t.FailNow()
	}
}

// lockHistory is the default revision's install records, oldest first.
func lockHistory(t *testing.T, c *cluster.Cluster) []*history.Record {
	t.Helper()
	rs, err := (&action.History{Config: config(c), Revision: "default"}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
