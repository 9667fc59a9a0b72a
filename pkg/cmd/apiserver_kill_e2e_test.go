package cmd_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// EnvFaultRuns sets how many times TestAPIServerKilledDuringInstallE2E kills the apiserver
// (default 5); EnvFaultSeed picks the kill points (default: the time).
const (
	EnvFaultRuns = "ISTIOCTL_FAULT_RUNS"
	EnvFaultSeed = "ISTIOCTL_FAULT_SEED"
)

// lineCounter counts the lines written to it (the -o json events) and keeps them.
type lineCounter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines int
}

func (w *lineCounter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines += bytes.Count(p, []byte("\n"))
	return w.buf.Write(p)
}

func (w *lineCounter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lines
}

// TestAPIServerKilledDuringInstallE2E, on a cluster of its own: install moves between the
// default and demo profiles (applies, waits, prunes the egress gateway), and at a random
// one of its -o json events (0: before the first) the kube-apiserver is SIGKILLed. The
// install must fail with an error that says the cluster cannot be reached, within
// --kubeclient-timeout (plus slack) of the kill, not hang. After the apiserver restarts
// (and its clients with it: cluster.RestartAPIServerClients), the same install converges:
// verify-install passes, no webhook in the cluster calls a Service without a ready endpoint
// with failurePolicy Fail, and no object was lost: everything that was there before the
// run still is, except what the run's spec prunes (and what those owned); two decoys (not
// ours) survive every run.
//
// ISTIOCTL_FAULT_RUNS=N runs N kills instead of 5.
func TestAPIServerKilledDuringInstallE2E(t *testing.T) {
	runs := 5
	if s := os.Getenv(EnvFaultRuns); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", EnvFaultRuns, s)
		}
		runs = n
	}
	c := cluster.StartPrivate(t)
	t.Setenv("HOME", t.TempDir())
	// A killed run cannot release the cluster lock: with the short lease the next install
	// takes it over after 3 s rather than 15 s.
	for _, kv := range []string{"ISTIOCTL_LOCK_LEASE_DURATION=3s", "ISTIOCTL_LOCK_RENEW_DEADLINE=2s", "ISTIOCTL_LOCK_RETRY_PERIOD=300ms"} {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(EnvFaultSeed); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", EnvFaultSeed, s, err)
		}
		seed = n
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d (%s=%d repeats the kill points)", seed, EnvFaultSeed, seed)
	k := []string{"--kubeconfig", c.Kubeconfig, "--kubeclient-timeout", clientTimeout.String()}
	istioctl := func(args ...string) (string, string, error) {
		return harness.Run(t, append(append([]string{}, k...), args...)...)
	}
	must := func(args ...string) string {
		t.Helper()
		return harness.Istioctl{T: t}.MustRun(append(append([]string{}, k...), args...)...)
	}
	profiles := []string{"default", "demo"}
	rendered := map[string]map[string]bool{}
	for _, p := range profiles {
		objs, err := render.ParseObjects([]byte(must("manifest", "generate", "--set", "profile="+p)))
		if err != nil {
			t.Fatal(err)
		}
		rendered[p] = map[string]bool{}
		for _, o := range objs {
			rendered[p][o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = true
		}
	}

	// How many events an install of each profile emits (-o json: one per object applied,
	// changed or not, plus the components'): kills land at a random one of them.
	events := map[string]int{}
	converge := func(profile string) {
		t.Helper()
		out := must("install", "-y", "-o", "json", "--set", "profile="+profile)
		if !strings.Contains(lastLine(out), `"type":"done"`) || strings.Contains(lastLine(out), `"error"`) {
			t.Fatalf("install of %s did not converge:\n%s", profile, out)
		}
		events[profile] = strings.Count(out, "\n")
	}
	converge("default")
	events["demo"] = events["default"]
	// Decoys: not ours, so no install or prune may touch them.
	decoys := []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "decoy-unlabelled", Namespace: "istio-system"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "decoy-other-revision", Namespace: "istio-system", Labels: map[string]string{
			ownership.LabelManaged: "Reconcile", ownership.LabelComponent: "Pilot", ownership.LabelRevision: "canary",
			ownership.LabelOwnerNamespace: "istio-system"}}},
	}
	for _, d := range decoys {
		if _, err := c.Kube.CoreV1().ConfigMaps(d.Namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	injected, lost := 0, 0
	var slowest time.Duration
	var positions []string
	for i := 0; i < runs; i++ {
		target := profiles[(i+1)%2]
		before := objectsOf(t, c)
		// Kill at a random event of the run (0: before the first).
		killAt := rng.IntN(events[target])
		progress := &lineCounter{}
		done := make(chan error, 1)
		go func() {
			x := harness.Istioctl{T: t, Ctx: ctx, Out: progress}
			done <- x.Run(append(append([]string{}, k...), "install", "-y", "-o", "json", "--set", "profile="+target)...).Err
		}()
		var err error
		finished := false
		started := time.Now()
		for !finished && progress.count() < killAt {
			select {
			case err = <-done:
				finished = true
			case <-time.After(time.Millisecond):
			}
		}
		delay := time.Since(started)
		at := progress.count()
		c.KillAPIServer(t)
		killed := time.Now()
		if !finished {
			select {
			case err = <-done:
			case <-time.After(clientTimeout + hangSlack):
				t.Fatalf("run %d: install still runs %s after the apiserver was killed (%d events in): a hang; its goroutines:\n%s",
					i, clientTimeout+hangSlack, at, ourGoroutines())
			}
			if d := time.Since(killed); d > slowest {
				slowest = d
			}
		}
		switch {
		case finished:
			t.Logf("run %d (%s): install finished (%d events) before the kill at event %d", i, target, at, killAt)
		case err == nil:
			// The kill came after the last request: a fault nobody saw.
			t.Logf("run %d (%s): the kill at %s (%d events) came after install's last request", i, target, delay.Round(time.Millisecond), at)
		default:
			injected++
			positions = append(positions, fmt.Sprintf("%s@%d/%s", target, at, delay.Round(time.Millisecond)))
			msg := err.Error()
			if !strings.Contains(msg, "cannot reach the cluster at "+c.Config.Host) {
				t.Errorf("run %d: the error does not say the cluster is unreachable:\n%s\nevents:\n%s", i, msg, progress.buf.String())
			}
			if exitCode(err) == 0 || isUsage(err) {
				t.Errorf("run %d: want exit 1, got %v", i, err)
			}
			t.Logf("run %d (%s): killed at %s, %d events in; install failed %s later: %s", i, target,
				delay.Round(time.Millisecond), at, time.Since(killed).Round(time.Millisecond), firstLineOf(msg))
		}

		c.RestartAPIServer(t)
		// Its clients (controllers, scheduler, kwok) restart too, so their watch backoff,
		// which grows with every outage, does not make each re-run wait longer.
		c.RestartAPIServerClients(t)
		converge(target)
		// The test's own restart of kwok can leave a pod not ready for a moment (seen once in
		// ~15 runs): a failure that lasts is one, a blip is logged.
		for attempt := 1; ; attempt++ {
			out, _, err := istioctl("verify-install", "--set", "profile="+target)
			if err == nil {
				break
			}
			if attempt == 3 {
				t.Fatalf("run %d: verify-install after the re-run, 3 times: %v\n%s", i, err, out)
			}
			t.Logf("run %d: verify-install after the re-run failed (attempt %d), again in 2s:\n%s", i, attempt, failures(out))
			time.Sleep(2 * time.Second)
		}
		stuckWebhooks(t, c)
		after := objectsOf(t, c)
		for id, o := range before {
			if _, ok := after[id]; ok {
				continue
			}
			if prunedBy(o, rendered[target], before) {
				continue
			}
			lost++
			t.Errorf("run %d: %s was lost", i, id)
		}
	}
	for _, d := range decoys {
		if _, err := c.Kube.CoreV1().ConfigMaps(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("decoy %s: %v", d.Name, err)
		}
	}
	if injected == 0 {
		t.Errorf("no kill landed inside an install in %d runs", runs)
	}
	t.Logf("%d runs, %d apiserver kills inside an install, slowest kill→exit %s, objects lost: %d; kills at (profile@events/delay) %s",
		runs, injected, slowest.Round(time.Millisecond), lost, strings.Join(positions, " "))
}

// ourGoroutines returns the stacks of the goroutines running this module's code: where a
// hung install waits.
func ourGoroutines() string {
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
	var out []string
	for _, g := range strings.Split(b.String(), "\n\n") {
		if strings.Contains(g, "istioctl-installer/istioctl/operator") && !strings.Contains(g, "TestAPIServerKilled") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// failures keeps a verify-install report's failed lines.
func failures(report string) string {
	var out []string
	for _, l := range strings.Split(report, "\n") {
		if strings.Contains(l, "✘") || strings.Contains(l, "objects checked") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// objectsOf lists every object of the kinds an install writes, by Kind/namespace/name,
// but install records.
func objectsOf(t *testing.T, c *cluster.Cluster) map[string]*unstructured.Unstructured {
	t.Helper()
	client, err := kube.NewClientForConfig(c.Config, ownership.KubeOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, gvk := range harness.SnapshotKinds {
		items, err := client.List(context.Background(), gvk, "")
		if err != nil {
			t.Fatalf("listing %s: %v", gvk.Kind, err)
		}
		for i := range items {
			o := &items[i]
			if o.GetLabels()[history.LabelRecord] == "true" {
				continue // install records: trimmed to the newest ones by design
			}
			out[gvk.Kind+"/"+o.GetNamespace()+"/"+o.GetName()] = o
		}
	}
	return out
}

// prunedBy says o may be gone after an install of a spec rendering want: it is ours and
// not rendered (pruned), or something a pruned object owned (garbage collected).
func prunedBy(o *unstructured.Unstructured, want map[string]bool, before map[string]*unstructured.Unstructured) bool {
	l := o.GetLabels()
	if l[ownership.LabelManaged] == "Reconcile" && l[ownership.LabelComponent] != "" && l[ownership.LabelRevision] == "default" &&
		!want[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] {
		return true
	}
	for _, ref := range o.GetOwnerReferences() {
		if owner, ok := before[ref.Kind+"/"+o.GetNamespace()+"/"+ref.Name]; ok && prunedBy(owner, want, before) {
			return true
		}
	}
	return false
}

// stuckWebhooks fails the test for a webhook, anywhere in the cluster, that would block
// the requests it intercepts: failurePolicy Fail and a Service without a ready endpoint.
func stuckWebhooks(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	ready := func(ns, name string) bool {
		slices, err := c.Kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + name})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range slices.Items {
			for _, ep := range s.Endpoints {
				if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
					return true
				}
			}
		}
		return false
	}
	check := func(kind, name, hook, policy string, ns, svc string) {
		if svc != "" && policy != "Ignore" && !ready(ns, svc) {
			t.Errorf("%s %s webhook %s (failurePolicy %s) calls Service %s/%s, which has no ready endpoint: it blocks what it intercepts",
				kind, name, hook, policy, ns, svc)
		}
	}
	mwcs, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range mwcs.Items {
		for _, h := range w.Webhooks {
			if s := h.ClientConfig.Service; s != nil {
				check("MutatingWebhookConfiguration", w.Name, h.Name, policyOf(h.FailurePolicy), s.Namespace, s.Name)
			}
		}
	}
	vwcs, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range vwcs.Items {
		for _, h := range w.Webhooks {
			if s := h.ClientConfig.Service; s != nil {
				check("ValidatingWebhookConfiguration", w.Name, h.Name, policyOf(h.FailurePolicy), s.Namespace, s.Name)
			}
		}
	}
}

func policyOf[T ~string](p *T) string {
	if p == nil {
		return "Fail" // the API's default
	}
	return string(*p)
}
