package cmd_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestWriteLockE2E: the cluster lock every writer takes, with separate istioctl processes
// against the shared cluster.
func TestWriteLockE2E(t *testing.T) {
	c := cluster.Get(t)
	bin := harness.BuildIstioctl(t, "")
	t.Setenv("HOME", t.TempDir())
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	istioctl("uninstall", "--purge", "-y")
	deleteLock(t, c)
	t.Cleanup(func() {
		_, _, _ = harness.Run(t, "--kubeconfig", c.Kubeconfig, "uninstall", "--purge", "-y")
		deleteLock(t, c)
	})
	k := []string{"--kubeconfig", c.Kubeconfig}

	// Three installs and an uninstall that wait for the lock at once run one after the other, each
	// converges, and the history lists the installs in the order they held the lock.
	t.Run("one writer at a time", func(t *testing.T) {
		istioctl("install", "-y", "-r", "canary", "--set", "profile=minimal")
		// The installs skip the admission dry runs their plans make before the lock, so
		// that, started at once, they meet at the lock rather than at a time set by load.
		runs := map[string][]string{
			"default":          {"install", "-y", "-o", "json", "--skip-admission-check", "--set", "profile=default"},
			"demo":             {"install", "-y", "-o", "json", "--skip-admission-check", "--set", "profile=demo"},
			"minimal":          {"install", "-y", "-o", "json", "--skip-admission-check", "--set", "profile=minimal"},
			"uninstall canary": {"uninstall", "-r", "canary", "-y", "-o", "json"},
		}
		// The test holds the lock until all four wait for it: started at once, the fastest
		// (the uninstall renders nothing) could otherwise finish before the slowest asks.
		held, _ := holdLock(t, c)
		procs := map[string]*harness.Process{}
		for name, args := range runs {
			procs[name] = harness.Istioctl{T: t, Bin: bin}.Start(name, append(append([]string{}, k...), args...)...)
		}
		for _, p := range procs {
			p.WaitFor(t, "waiting for the lock", p.Out.When(lockWaiting))
		}
		if err := held.Release(); err != nil {
			t.Fatal(err)
		}
		streams := map[string][]streamEvent{}
		waited := 0
		for name, p := range procs {
			if code := p.Wait(t, 5*time.Minute); code != 0 {
				t.Fatalf("%s: exit %d\n%s\n%s", name, code, p.Out, p.ErrOut)
			}
			streams[name] = harness.Events[streamEvent](t, p.Out.String())
			if w, ok := first(streams[name], isLock("waiting")); ok {
				waited++
				if w.Holder == "" || !strings.Contains(w.Message, "has held it for") {
					t.Errorf("%s's waiting line does not name the holder and how long it held the lock: %+v", name, w)
				}
			}
		}
		order := oneAtATime(t, streams)
		t.Logf("lock order: %s; %d of 4 waited", strings.Join(order, ", "), waited)
		if len(order) != 4 || waited != 4 {
			t.Errorf("%d runs wrote (want 4), %d waited for the lock (want 4)", len(order), waited)
		}
		var installs []string
		for _, name := range order {
			if name != "uninstall canary" {
				installs = append(installs, name)
			}
		}
		istioctl("verify-install", "--set", "profile="+installs[len(installs)-1])
		if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(context.Background(), "istiod-canary", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("istiod-canary after its uninstall: %v", err)
		}
		for id, o := range harness.Objects(t, c) {
			if l := o.GetLabels(); l[ownership.LabelRevision] == "canary" && l[ownership.LabelComponent] != "" && o.GetKind() != "CustomResourceDefinition" {
				t.Errorf("%s of revision canary survived its uninstall", id)
			}
		}
		var recorded []string
		for _, r := range historyOf(t, c.Kubeconfig, "-r", "default") {
			recorded = append(recorded, r.Profile)
		}
		if strings.Join(recorded, ",") != strings.Join(installs, ",") {
			t.Errorf("history lists profiles %v, the installs held the lock in the order %v", recorded, installs)
		}
	})

	// A re-install's only writes are the Lease's; --lock-timeout 0 against a held lock
	// exits 3 at once, naming the holder, having asked for nothing but the Lease; the
	// read-only commands warn that a write is in progress.
	t.Run("lock-timeout 0 and readers", func(t *testing.T) {
		kubeconfig, log := harness.RecordingProxy(t, c)
		rs := historyOf(t, c.Kubeconfig, "-r", "default")
		spec := []string{"--set", "profile=" + rs[len(rs)-1].Profile} // what is installed
		log.Take()
		if out, stderr, err := harness.Run(t, append([]string{"--kubeconfig", kubeconfig, "install", "-y"}, spec...)...); err != nil || !strings.Contains(out, "(0 applied,") {
			t.Fatalf("re-install: %v\n%s\n%s", err, out, stderr)
		}
		for _, w := range harness.Writes(log.Take()) {
			if !strings.Contains(w, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases") {
				t.Errorf("the re-install wrote %s", w)
			}
		}

		held, holder := holdLock(t, c)
		log.Take()
		start := time.Now()
		// "At once" is counted, not timed (load stretches the process start and the render,
		// never the number of requests): it decides on its one read of the Lease, without a
		// watch or a second read. With noRetry a retry would come 4 minutes later: any wait
		// at all would outlast p.Wait.
		p := harness.Istioctl{T: t, Bin: bin, Env: noRetry}.Start("install --lock-timeout 0", "--kubeconfig", kubeconfig, "install", "-y", "--lock-timeout", "0")
		code := p.Wait(t, time.Minute)
		took := time.Since(start)
		errOut := p.ErrOut.String()
		if code != 3 || !strings.Contains(errOut, holder.String()) || !strings.Contains(errOut, "--lock-timeout is 0") {
			t.Errorf("exit %d after %v:\n%s", code, took, errOut)
		}
		reqs := log.Take()
		for _, r := range reqs {
			if !strings.HasPrefix(r, "GET /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/istioctl-lock") {
				t.Errorf("--lock-timeout 0 sent %s: only the Lease may be read", r)
			}
		}
		if len(reqs) != 1 {
			t.Errorf("--lock-timeout 0 sent %d requests, want its one read of the Lease: %v", len(reqs), reqs)
		}
		t.Logf("--lock-timeout 0: exit %d %v after it started; %d request(s): %v", code, took.Round(time.Millisecond), len(reqs), reqs)

		// Every writer takes it: the tag commands too.
		for _, args := range [][]string{{"tag", "set", "prod", "--revision", "default", "--lock-timeout", "0"}, {"tag", "remove", "default", "-y", "--lock-timeout", "0"},
			{"rollback", "-y", "--lock-timeout", "0"}, {"uninstall", "--purge", "-y", "--lock-timeout", "0"}} {
			_, _, err := harness.Run(t, append(append([]string{}, k...), args...)...)
			var heldErr *action.LockHeldError
			if !errors.As(err, &heldErr) || heldErr.Holder.Identity != holder.Identity || event.ExitCode(err) != event.ExitLocked {
				t.Errorf("%s against a held lock: exit %d, %v", strings.Join(args, " "), event.ExitCode(err), err)
			}
		}
		// --skip-lock writes without it, saying so.
		out, _, err := harness.Run(t, append(append([]string{}, k...), "uninstall", "-r", "nothing-here", "--ignore-not-found", "-y", "--skip-lock")...)
		if err != nil || !strings.Contains(out, "! --skip-lock: writing WITHOUT the cluster lock") {
			t.Errorf("--skip-lock: %v\n%s", err, out)
		}

		for _, args := range [][]string{{"verify-install"}, {"history"}, {"x", "precheck"}, {"install", "--dry-run"}} {
			out, stderr, _ := harness.Run(t, append(append([]string{}, k...), args...)...)
			if n := strings.Count(out+stderr, "a write is in progress: "+holder.String()); n != 1 {
				t.Errorf("%s: %d warning lines that a write is in progress, want 1:\n%s\n%s", strings.Join(args, " "), n, out, stderr)
			}
		}
		if err := held.Release(); err != nil {
			t.Fatal(err)
		}
	})

	// A holder killed while it writes: the next writer takes its lock over once it has
	// seen it unrenewed for the lease duration, names it, converges, and the history
	// says the killed run was interrupted.
	t.Run("killed holder", func(t *testing.T) {
		lease := watchLease(t, c)
		a := harness.Istioctl{T: t, Bin: bin, Env: shortLock}.Start("killed", append(append([]string{}, k...), "install", "-y", "-o", "json", "--set", "profile=demo")...)
		a.WaitFor(t, "a first write", a.Out.When(firstWrite))
		_ = a.Cmd.Process.Kill()
		a.Wait(t, time.Minute)
		counted, leaseReqs := countLeaseRequests(t, c)
		b := harness.Istioctl{T: t, Bin: bin, Env: shortLock}.Start("next", "--kubeconfig", counted, "install", "-y", "-o", "json", "--set", "profile=default")
		if code := b.Wait(t, 2*time.Minute); code != 0 {
			t.Fatalf("the next writer: exit %d\n%s\n%s", code, b.Out, b.ErrOut)
		}
		evs := harness.Events[streamEvent](t, b.Out.String())
		waiting, _ := first(evs, isLock("waiting"))
		taken, ok := first(evs, isLock("taken-over"))
		if !ok || !strings.Contains(taken.Holder, pidOf(a)) || !strings.Contains(taken.Message, "recorded as interrupted") {
			t.Fatalf("no takeover naming the killed holder (%s):\n%s", pidOf(a), b.Out)
		}
		if taken.Time.Before(waiting.Time) {
			t.Errorf("the takeover (%s) came before the wait (%s)", taken.Time.Format(time.StampMicro), waiting.Time.Format(time.StampMicro))
		}
		// Not early, from the Lease's own record (timestamps its writers wrote; load does not
		// move them relative to each other): the taker's acquireTime is at least the killed
		// holder's leaseDurationSeconds after its last renewTime (client-go judges expiry from
		// its first sight of the record, which came after that renewal).
		last, took, ok := lease.takeover(pidOf(a), pidOf(b))
		switch {
		case !ok:
			t.Errorf("the Lease's versions show no takeover of %s by %s: %+v", pidOf(a), pidOf(b), lease.all())
		case last.duration != testLease || took.acquired.Sub(last.renewed) < last.duration:
			t.Errorf("taken over at %s, the killed holder last renewed at %s for %v: before its lease expired",
				took.acquired.Format(time.StampMicro), last.renewed.Format(time.StampMicro), last.duration)
		}
		// Not late, counted rather than timed: each try of the taker's starts at least a
		// retry period after the last one ended, and it takes over at the first that finds the
		// lease unrenewed for its duration since its first sight: at most 1 + duration/retry
		// answered reads (10 here) find it valid, then one takes it; a try whose write failed
		// costs one more. Load only spaces the tries further (a lower count); a taker that
		// missed the expiry would read on.
		reads, failedWrites, wrote := leaseReqs.counts()
		if limit := 2 + int(testLease/testRetry) + failedWrites; !wrote || reads < 2 || reads > limit {
			t.Errorf("took over at answered read %d of the Lease (taken: %v), want at the first after its expiry: between 2 and %d", reads, wrote, limit)
		}
		t.Logf("took over %v after first seeing the killed holder's lease (%v after its last renewal, by the Lease), at read %d: %s",
			taken.Time.Sub(waiting.Time).Round(time.Millisecond), took.acquired.Sub(last.renewed).Round(time.Millisecond), reads, taken.Message)
		istioctl("verify-install", "--set", "profile=default")
		rs := historyOf(t, c.Kubeconfig, "-r", "default")
		if n := len(rs); n < 2 || rs[n-2].Outcome != history.Interrupted || !strings.Contains(rs[n-2].Run, pidOf(a)+" ") ||
			rs[n-2].Profile != "demo" || rs[n-1].Outcome != history.Succeeded || rs[n-1].Profile != "default" {
			t.Errorf("history after the takeover: %+v", summaries(rs))
		}
	})

	// A holder stopped (SIGSTOP) past its lease duration, while another takes the lock
	// over and finishes: continued, it notices the loss before writing again, writes
	// nothing more and exits non-zero.
	t.Run("stopped holder", func(t *testing.T) {
		kubeconfig, log := harness.RecordingProxy(t, c)
		a := harness.Istioctl{T: t, Bin: bin, Env: shortLock}.Start("stopped", "--kubeconfig", kubeconfig, "install", "-y", "-o", "json", "--set", "profile=demo")
		a.WaitFor(t, "a first write", a.Out.When(firstWrite))
		if err := a.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		stopped := time.Now()
		b := harness.Istioctl{T: t, Bin: bin, Env: shortLock}.Start("taker", append(append([]string{}, k...), "install", "-y", "-o", "json", "--set", "profile=default")...)
		if code := b.Wait(t, 2*time.Minute); code != 0 {
			t.Fatalf("the writer taking over: exit %d\n%s\n%s", code, b.Out, b.ErrOut)
		}
		if taken, ok := first(harness.Events[streamEvent](t, b.Out.String()), isLock("taken-over")); !ok || !strings.Contains(taken.Holder, pidOf(a)) {
			t.Fatalf("no takeover of the stopped holder:\n%s", b.Out)
		}
		log.Take()
		if err := a.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		t.Logf("stopped for %v", time.Since(stopped).Round(time.Millisecond))
		code := a.Wait(t, time.Minute)
		for _, w := range harness.Writes(log.Take()) {
			if !strings.Contains(w, "/leases/") {
				t.Errorf("the continued holder wrote %s", w)
			}
		}
		if code == 0 || !strings.Contains(a.ErrOut.String(), "lost the cluster lock") {
			t.Errorf("the continued holder: exit %d\n%s", code, a.ErrOut)
		}
		istioctl("verify-install", "--set", "profile=default")
		rs := historyOf(t, c.Kubeconfig, "-r", "default")
		if n := len(rs); n < 2 || rs[n-2].Outcome != history.Interrupted || !strings.Contains(rs[n-2].Run, pidOf(a)+" ") || rs[n-1].Profile != "default" {
			t.Errorf("history after the stopped holder: %+v", summaries(rs))
		}
	})

	// Ctrl-C of a holder: it stops at a safe point and releases the lock; the watch of the
	// writer waiting for it hands it the lock, not its retry. Judged by the path, not by a
	// gap load could stretch: the waiter runs with noRetry (its first retry 4 minutes after
	// its first read) and --lock-timeout 2m, so its wait ends before its retry could come,
	// and only the watch can hand it the lock.
	t.Run("interrupted holder", func(t *testing.T) {
		// From a converged install (the next writer's first stage, the CRDs, is then quick to
		// report): the holder's istiod cannot be scheduled, so it waits until interrupted.
		istioctl("install", "-y", "--set", "profile=default")
		a := harness.Istioctl{T: t, Bin: bin}.Start("interrupted", append(append([]string{}, k...), "install", "-y", "-o", "json", "--readiness-timeout", "2m",
			"--set", "components.pilot.k8s.nodeSelector.no-such-node=x")...)
		a.WaitFor(t, "a first write", a.Out.When(firstWrite))
		b := harness.Istioctl{T: t, Bin: bin, Env: noRetry}.Start("next", append(append([]string{}, k...), "install", "-y", "-o", "json", "--lock-timeout", "2m", "--set", "profile=default")...)
		b.WaitFor(t, "waiting for the lock", b.Out.When(lockWaiting))
		if err := a.Cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if code := a.Wait(t, time.Minute); code != 130 {
			t.Errorf("the interrupted holder: exit %d, want 130\n%s", code, a.ErrOut)
		}
		if code := b.Wait(t, 3*time.Minute); code != 0 {
			t.Fatalf("the next writer (exit 3: its wait ended, the release did not wake it): exit %d\n%s\n%s", code, b.Out, b.ErrOut)
		}
		done, _ := last(harness.Events[streamEvent](t, a.Out.String()), isType("done"))
		taken, ok := first(harness.Events[streamEvent](t, b.Out.String()), isLock("acquired"))
		write, _ := first(harness.Events[streamEvent](t, b.Out.String()), streamEvent.writes)
		// The order of the events (one machine's clock): the holder's done, then the release,
		// then the waiter's take, then its first write. The gap is only logged.
		gap := taken.Time.Sub(done.Time)
		t.Logf("the next writer took the lock %v after the interrupted holder's done, and its first write came %v after it",
			gap.Round(time.Millisecond), write.Time.Sub(done.Time).Round(time.Millisecond))
		if done.Status != "interrupted" || !ok || gap < 0 || write.Time.Before(taken.Time) {
			t.Errorf("holder's done %+v; the next writer took the lock %v after it (acquired event: %v), want after it, and wrote after taking it", done, gap, ok)
		}
		oneAtATime(t, map[string][]streamEvent{"interrupted": harness.Events[streamEvent](t, a.Out.String()), "next": harness.Events[streamEvent](t, b.Out.String())})
	})

	// A writer that may not write the Lease fails before any write, naming the
	// permission; precheck lists the Lease permissions.
	t.Run("no permission", func(t *testing.T) {
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
		kubeconfig, log := harness.RecordingProxy(t, c)
		want := "permission denied to update leases.coordination.k8s.io in namespace kube-system" // the Lease exists (released)
		var err error
		for range 20 { // until the authorizer sees the new binding
			log.Take()
			if _, _, err = harness.Run(t, "--kubeconfig", kubeconfig, "--as", user, "install", "-y", "--set", "profile=minimal"); err != nil && strings.Contains(err.Error(), want) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--skip-lock") || exitCode(err) == 0 {
			t.Fatalf("install without the Lease permissions: %v", err)
		}
		for _, w := range harness.Writes(log.Take()) {
			if !strings.HasPrefix(w, "PUT /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/istioctl-lock") {
				t.Errorf("a writer without the Lease permissions sent %s", w)
			}
		}
		out, _, _ := harness.Run(t, "--kubeconfig", c.Kubeconfig, "--as", user, "x", "precheck", "-v")
		for _, verb := range []string{"create", "update"} {
			if line := fmt.Sprintf("✘ [IST0141] Namespace/kube-system: Missing required permission to %s resource leases.coordination.k8s.io", verb); !strings.Contains(out, line) {
				t.Errorf("precheck lacks %q:\n%s", line, out)
			}
		}
		if !strings.Contains(out, "✔ Namespace/kube-system: may get leases.coordination.k8s.io") {
			t.Errorf("precheck does not check that you may get the Lease:\n%s", out)
		}
	})
}

// TestLockAcrossAPIServerOutageE2E: an install holds the lock and writes, a second one
// waits for it; then the apiserver is cut off from both for a fixed time: their connections
// go through a proxy the test stops and starts again, so the outage lasts what the test
// says, not what an apiserver restart takes on a loaded machine (the restart itself is
// TestAPIServerKilledDuringInstallE2E's). The cut outlasts the holder's renew deadline, so
// the holder loses the lock, and stays well within the waiter's lease duration of failed
// requests, so the waiter waits on. No write of one may fall inside the other's run (from
// their -o json streams); the waiter takes the lock over and converges.
// ISTIOCTL_FAULT_RUNS sets how many outages (default 2).
func TestLockAcrossAPIServerOutageE2E(t *testing.T) {
	runs := harness.FaultRuns(t, 2)
	c := cluster.Get(t)
	bin := harness.BuildIstioctl(t, "")
	t.Setenv("HOME", t.TempDir())
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	istioctl("uninstall", "--purge", "-y")
	deleteLock(t, c)
	t.Cleanup(func() {
		_, _, _ = harness.Run(t, "--kubeconfig", c.Kubeconfig, "uninstall", "--purge", "-y")
		deleteLock(t, c)
	})
	kubeconfig, proxy := harness.StoppableKubeconfig(t, c.Kubeconfig, "")
	k := []string{"--kubeconfig", kubeconfig, "--kubeclient-timeout", clientTimeout.String()}
	// The holder renews every 500 ms and gives up after 5 s without a renewal: the cut is
	// longer than both together, so it loses the lock. The waiter gives up after a lease
	// duration (15 s) of failed requests: the cut leaves 7 s of room for the test's own
	// scheduling (its sleep overshooting).
	const cut = 8 * time.Second
	periods := []string{"ISTIOCTL_LOCK_LEASE_DURATION=15s", "ISTIOCTL_LOCK_RENEW_DEADLINE=5s", "ISTIOCTL_LOCK_RETRY_PERIOD=500ms"}
	profiles := [][2]string{{"demo", "default"}, {"demo", "minimal"}}
	for i := range runs {
		pair := profiles[i%len(profiles)]
		a := harness.Istioctl{T: t, Bin: bin, Env: periods}.Start("holder", append(append([]string{}, k...), "install", "-y", "-o", "json", "--set", "profile="+pair[0])...)
		a.WaitFor(t, "a first write", a.Out.When(firstWrite))
		b := harness.Istioctl{T: t, Bin: bin, Env: periods}.Start("waiter", append(append([]string{}, k...), "install", "-y", "-o", "json", "--set", "profile="+pair[1])...)
		b.WaitFor(t, "waiting for the lock", b.Out.When(lockWaiting))
		proxy.Stop()
		time.Sleep(cut)
		proxy.Start(t)
		codeA, codeB := a.Wait(t, 3*time.Minute), b.Wait(t, 3*time.Minute)
		order := oneAtATime(t, map[string][]streamEvent{"holder": harness.Events[streamEvent](t, a.Out.String()), "waiter": harness.Events[streamEvent](t, b.Out.String())})
		var notes []string
		for _, e := range harness.Events[streamEvent](t, b.Out.String()) {
			if e.Type == "lock" {
				notes = append(notes, e.Status)
			}
		}
		t.Logf("run %d: holder (%s) exit %d, waiter (%s) exit %d; wrote in the order %v; the waiter's lock events %v",
			i, pair[0], codeA, pair[1], codeB, order, notes)
		if codeB != 0 {
			t.Fatalf("run %d: the waiter did not go on after the outage: exit %d\n%s", i, codeB, b.ErrOut)
		}
		if out, stderr, err := harness.Run(t, append(append([]string{}, k...), "verify-install", "--set", "profile="+pair[1])...); err != nil {
			t.Fatalf("run %d: verify-install after the waiter: %v\n%s\n%s", i, err, out, stderr)
		}
	}
}
