package cmd_test

import (
	"context"
	"errors"
	"fmt"
	"os"
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
		for id, o := range objectsOf(t, c) {
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
		p := harness.Istioctl{T: t, Bin: bin}.Start("install --lock-timeout 0", "--kubeconfig", kubeconfig, "install", "-y", "--lock-timeout", "0")
		code := p.Wait(t, time.Minute)
		exited := time.Now()
		took, decided := exited.Sub(start), exited.Sub(log.LastAt())
		errOut := p.ErrOut.String()
		if code != 3 || !strings.Contains(errOut, holder.String()) || !strings.Contains(errOut, "--lock-timeout is 0") {
			t.Errorf("exit %d after %v:\n%s", code, took, errOut)
		}
		// From reading the Lease to the exit: the lock's part. The whole run adds the
		// process start and the render (a loaded machine stretches those; it never waits for
		// the lease, which would take 15 s).
		if decided > time.Second || took > 5*time.Second {
			t.Errorf("--lock-timeout 0 exited %v after reading the Lease (%v after it started), want at most 1s", decided, took)
		}
		reqs := log.Take()
		for _, r := range reqs {
			if !strings.HasPrefix(r, "GET /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/istioctl-lock") {
				t.Errorf("--lock-timeout 0 sent %s: only the Lease may be read", r)
			}
		}
		if len(reqs) == 0 {
			t.Error("the recording proxy saw no request")
		}
		t.Logf("--lock-timeout 0: exit %d %v after reading the Lease, %v after it started; %d request(s): %v",
			code, decided.Round(time.Millisecond), took.Round(time.Millisecond), len(reqs), reqs)

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
		a := harness.Istioctl{T: t, Bin: bin, Env: shortLock}.Start("killed", append(append([]string{}, k...), "install", "-y", "-o", "json", "--set", "profile=demo")...)
		a.WaitFor(t, "a first write", a.Out.When(firstWrite))
		_ = a.Cmd.Process.Kill()
		a.Wait(t, time.Minute)
		b := harness.Istioctl{T: t, Bin: bin, Env: shortLock}.Start("next", append(append([]string{}, k...), "install", "-y", "-o", "json", "--set", "profile=default")...)
		if code := b.Wait(t, 2*time.Minute); code != 0 {
			t.Fatalf("the next writer: exit %d\n%s\n%s", code, b.Out, b.ErrOut)
		}
		evs := harness.Events[streamEvent](t, b.Out.String())
		waiting, _ := first(evs, isLock("waiting"))
		taken, ok := first(evs, isLock("taken-over"))
		if !ok || !strings.Contains(taken.Holder, pidOf(a)) || !strings.Contains(taken.Message, "recorded as interrupted") {
			t.Fatalf("no takeover naming the killed holder (%s):\n%s", pidOf(a), b.Out)
		}
		// The lease duration from its first sight of the lease, and one retry (client-go
		// jitters a retry period up to 2.2 times it).
		after := taken.Time.Sub(waiting.Time)
		if max := testLease + time.Duration(2.2*float64(testRetry)) + 500*time.Millisecond; after > max || after < testLease {
			t.Errorf("took over %v after it first saw the lease, want between %v and %v", after, testLease, max)
		}
		t.Logf("took over %v after first seeing the killed holder's lease: %s", after.Round(time.Millisecond), taken.Message)
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

	// Ctrl-C of a holder: it stops at a safe point and releases the lock; the writer
	// waiting for it (the fixed periods: it would retry only every 2-4.4 s) starts within a
	// second of the holder's done.
	t.Run("interrupted holder", func(t *testing.T) {
		// From a converged install (the next writer's first stage, the CRDs, is then quick to
		// report): the holder's istiod cannot be scheduled, so it waits until interrupted.
		istioctl("install", "-y", "--set", "profile=default")
		a := harness.Istioctl{T: t, Bin: bin}.Start("interrupted", append(append([]string{}, k...), "install", "-y", "-o", "json", "--readiness-timeout", "2m",
			"--set", "components.pilot.k8s.nodeSelector.no-such-node=x")...)
		a.WaitFor(t, "a first write", a.Out.When(firstWrite))
		b := harness.Istioctl{T: t, Bin: bin}.Start("next", append(append([]string{}, k...), "install", "-y", "-o", "json", "--set", "profile=default")...)
		b.WaitFor(t, "waiting for the lock", b.Out.When(lockWaiting))
		if err := a.Cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if code := a.Wait(t, time.Minute); code != 130 {
			t.Errorf("the interrupted holder: exit %d, want 130\n%s", code, a.ErrOut)
		}
		if code := b.Wait(t, 2*time.Minute); code != 0 {
			t.Fatalf("the next writer: exit %d\n%s\n%s", code, b.Out, b.ErrOut)
		}
		done, _ := last(harness.Events[streamEvent](t, a.Out.String()), isType("done"))
		taken, _ := first(harness.Events[streamEvent](t, b.Out.String()), isLock("acquired"))
		write, _ := first(harness.Events[streamEvent](t, b.Out.String()), streamEvent.writes)
		// The lock is taken on the release, not at the next retry (2 s at the earliest); the
		// first write after it depends on the machine's load, so it is only logged.
		gap := taken.Time.Sub(done.Time)
		t.Logf("the next writer took the lock %v after the interrupted holder's done, and its first write came %v after it",
			gap.Round(time.Millisecond), write.Time.Sub(done.Time).Round(time.Millisecond))
		if done.Status != "interrupted" || gap > time.Second || gap < 0 || write.Time.Before(taken.Time) {
			t.Errorf("holder's done %+v; the next writer took the lock %v after it, want within 1s, and wrote after taking it", done, gap)
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

// TestLockAcrossAPIServerRestartE2E, on a cluster of its own: an install holds the lock
// and writes, a second one waits for it; the apiserver is killed, and restarted 4 s later
// (past the holder's renew deadline). No write of one may fall inside the other's run
// (from their -o json streams); the waiter goes on and converges. ISTIOCTL_FAULT_RUNS sets
// how many restarts (default 2).
func TestLockAcrossAPIServerRestartE2E(t *testing.T) {
	runs := 2
	if os.Getenv(EnvFaultRuns) != "" {
		runs = faultRuns(t)
	}
	c := cluster.StartPrivate(t)
	bin := harness.BuildIstioctl(t, "")
	t.Setenv("HOME", t.TempDir())
	k := []string{"--kubeconfig", c.Kubeconfig, "--kubeclient-timeout", clientTimeout.String()}
	// Longer than shortLock: a just restarted apiserver, with every controller listing
	// again, can take over a second to answer a renewal.
	// The waiter gives up after a lease duration of transport errors: 10 s leaves the
	// restart (4 s down, then the apiserver's start) room on a loaded machine.
	periods := []string{"ISTIOCTL_LOCK_LEASE_DURATION=10s", "ISTIOCTL_LOCK_RENEW_DEADLINE=6s", "ISTIOCTL_LOCK_RETRY_PERIOD=500ms"}
	profiles := [][2]string{{"demo", "default"}, {"demo", "minimal"}}
	for i := range runs {
		pair := profiles[i%len(profiles)]
		a := harness.Istioctl{T: t, Bin: bin, Env: periods}.Start("holder", append(append([]string{}, k...), "install", "-y", "-o", "json", "--set", "profile="+pair[0])...)
		a.WaitFor(t, "a first write", a.Out.When(firstWrite))
		b := harness.Istioctl{T: t, Bin: bin, Env: periods}.Start("waiter", append(append([]string{}, k...), "install", "-y", "-o", "json", "--set", "profile="+pair[1])...)
		b.WaitFor(t, "waiting for the lock", b.Out.When(lockWaiting))
		// Not before the holder's CRDs are established: the apiserver establishes a CRD on
		// an update event only, so one created just before a crash may stay unestablished
		// after the restart (a Kubernetes fault of its own, not the lock's).
		a.WaitFor(t, "Base ready", a.Out.When(func(l string) bool {
			return strings.Contains(l, `"type":"component-ready","component":"Base"`)
		}))
		c.KillAPIServer(t)
		time.Sleep(4 * time.Second)
		c.RestartAPIServer(t)
		c.RestartAPIServerClients(t)
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
			t.Fatalf("run %d: the waiter did not go on after the restart: exit %d\n%s", i, codeB, b.ErrOut)
		}
		if out, stderr, err := harness.Run(t, append(append([]string{}, k...), "verify-install", "--set", "profile="+pair[1])...); err != nil {
			t.Fatalf("run %d: verify-install after the waiter: %v\n%s\n%s", i, err, out, stderr)
		}
	}
}
