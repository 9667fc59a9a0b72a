package cmd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/migrate"
	"github.com/istioctl-installer/istioctl/operator/revision"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestRevisionUpgradeE2E: 20 Deployments (replicas 1) in 4 namespaces (the default tag, a
// named tag, istio.io/rev=a, istio-injection=enabled), injected by revision a (built as
// 1.29.4), move to b with upgrade --strategy revision in batches of 5, the real istiod
// injecting: a dry run writes nothing; Ctrl-C during batch 2 stops the run and the same
// command resumes it without restarting batch 1; a workload that cannot be scheduled
// stops it in batch 3, naming it; after fixing it the same command completes, every pod
// injected by b; --rollback returns every pod to a; --prune-old is refused while a pod
// uses a and removes a once none does.
func TestRevisionUpgradeE2E(t *testing.T) {
	c := cluster.Get(t)
	c.RequireRealIstiod(t)
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	istioctl("uninstall", "--purge", "-y")
	cleanup := func() {
		_, _, _ = harness.Run(t, "--kubeconfig", c.Kubeconfig, "uninstall", "--purge", "-y")
		_ = c.Kube.CoreV1().ConfigMaps("istio-system").Delete(ctx, "istio-revision-upgrade", metav1.DeleteOptions{})
	}
	t.Cleanup(cleanup)
	start := time.Now()
	step := func(what string) { t.Logf("%s: %v", what, time.Since(start).Round(100*time.Millisecond)) }
	bin := harness.BuildIstioctl(t, "")
	step("built")

	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.At("1.29.4").MustOutput("install", "-y", "--set", "profile=minimal", "--revision", "a")
	step("installed a")
	istioctl("tag", "set", "default", "--revision", "a", "--overwrite")
	istioctl("tag", "set", "prod", "--revision", "a")
	nss := []string{
		labelled(t, c, map[string]string{"istio.io/rev": "default"}),
		labelled(t, c, map[string]string{"istio.io/rev": "prod"}),
		labelled(t, c, map[string]string{"istio.io/rev": "a"}),
		labelled(t, c, map[string]string{"istio-injection": "enabled"}),
	}
	direct := nss[2]
	var all []string // Deployment/ns/name, as the batches order them
	for _, ns := range nss {
		for i := range 5 {
			name := fmt.Sprintf("w%d", i)
			createApp(t, c, ns, name)
			all = append(all, "Deployment/"+ns+"/"+name)
		}
	}
	sort.Strings(all)
	batch := func(i int) []string { return all[5*i : 5*i+5] }
	step("20 workloads on a")
	allOn(t, c, nss, "a")

	upgrade := []string{"upgrade", "--strategy", "revision", "--to-revision", "b", "--relabel", "--batch-size", "5",
		"--set", "profile=minimal", "-y", "--readiness-timeout", "20s"}

	// A dry run writes nothing: no revision b, no record, the labels as they were.
	out := istioctl(append(upgrade, "--dry-run")...)
	if !strings.Contains(out, "revision a -> b: 20 workloads in 4 batches") || !strings.Contains(out, "Namespace/"+direct+": label istio.io/rev=a -> b") {
		t.Errorf("the dry run's plan does not say the move and the relabel:\n%s", out)
	}
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod-b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dry run created istiod-b: %v", err)
	}
	if _, err := c.Kube.CoreV1().ConfigMaps("istio-system").Get(ctx, "istio-revision-upgrade", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dry run wrote the progress record: %v", err)
	}
	step("dry run")
	allOn(t, c, nss, "a")

	// The workload of batch 3 cannot be scheduled.
	broken := strings.Split(batch(2)[0], "/")
	setNodeSelector(t, c, broken[1], broken[2], map[string]string{"no-such-node": "x"})

	// Ctrl-C once batch 1 is through: the run stops in batch 2 with exit 130.
	code, stream := interruptAfter(t, bin, c.Kubeconfig, `"type":"batch"`, append(upgrade, "-o", "json")...)
	if code != 130 {
		t.Fatalf("the interrupted run exited %d, want 130:\n%s", code, stream)
	}
	step("interrupted")
	first := podUIDs(t, c, batch(0))
	for _, w := range batch(0) {
		if got := podsOf(t, c, w); got[0].rev != "b" {
			t.Errorf("%s is on %s after batch 1", w, got[0].rev)
		}
	}

	// The same command resumes: batch 1 is not restarted, batch 3 stops on the broken one.
	// (a shorter wait: batch 3 cannot pass it)
	stdout, _, err := harness.Run(t, append(append([]string{"--kubeconfig", c.Kubeconfig}, upgrade...), "--readiness-timeout", "8s")...)
	if err == nil {
		t.Fatalf("the run with an unschedulable workload in batch 3 succeeded:\n%s", stdout)
	}
	for _, want := range []string{"batch 3/4", batch(2)[0], "unschedulable"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if !strings.Contains(stdout, "(resumed: 1 of 4 batches done)") || !strings.Contains(stdout, "✔ batch 2/4") || strings.Contains(stdout, "batch 1/4") {
		t.Errorf("the resumed run's lines:\n%s", stdout)
	}
	if now := podUIDs(t, c, batch(0)); !equalMaps(now, first) {
		t.Errorf("batch 1 was restarted again by the resumed run: pods %v, then %v", first, now)
	}
	for _, w := range batch(3) {
		if got := podsOf(t, c, w); got[0].rev != "a" {
			t.Errorf("%s (batch 4) moved to %s although batch 3 failed", w, got[0].rev)
		}
	}

	step("stopped at batch 3")
	// Fixed, the same command completes, one line per batch.
	setNodeSelector(t, c, broken[1], broken[2], nil)
	out = istioctl(upgrade...)
	if !strings.Contains(out, "✔ batch 4/4: 5 workloads ready on revision b") || !strings.Contains(out, "✔ Installation complete (revision a -> b: 2 batches, 5 workloads restarted)") {
		t.Errorf("the completing run's lines:\n%s", out)
	}
	allOn(t, c, nss, "b")
	revs := revisions(t, istioctl)
	if a := revs["a"]; len(a.Workloads) != 0 || len(a.Namespaces) != 0 || len(a.Tags) != 0 || a.Namespace == "" {
		t.Errorf("revision a after the move: %+v; want its istiod and nothing using it", a)
	}
	if b := revs["b"]; strings.Join(b.Tags, ",") != "default,prod" || len(b.Namespaces) != 4 {
		t.Errorf("revision b after the move: tags %v, namespaces %v; want default,prod and all 4", b.Tags, b.Namespaces)
	}

	step("completed")
	// --rollback returns every pod to a, the tags and the label with them; with
	// --max-unavailable 2 at most two workloads of a batch are restarting at any time.
	since := time.Now()
	out = istioctl("upgrade", "--strategy", "revision", "--to-revision", "b", "--rollback", "-y", "--readiness-timeout", "20s", "--max-unavailable", "2")
	if !strings.Contains(out, "✔ Rollback to revision a: 4 batches, 20 workloads restarted") {
		t.Errorf("the rollback's lines:\n%s", out)
	}
	if n := restartsInFlight(t, c, since); n != 2 {
		t.Errorf("with --max-unavailable 2, at most %d workloads were restarting at once, want 2", n)
	}
	allOn(t, c, nss, "a")
	revs = revisions(t, istioctl)
	if a := revs["a"]; strings.Join(a.Tags, ",") != "default,prod" || len(a.Namespaces) != 4 {
		t.Errorf("revision a after the rollback: tags %v, namespaces %v", a.Tags, a.Namespaces)
	}

	step("rolled back")
	// --prune-old is refused while pods use a (a first subset moved), then removes it.
	stdout, _, err = harness.Run(t, append(append([]string{"--kubeconfig", c.Kubeconfig}, upgrade...), "--namespaces", nss[3], "--prune-old")...)
	if err == nil || !strings.Contains(err.Error(), "revision a is still used") {
		t.Fatalf("--prune-old with pods on a: %v\n%s", err, stdout)
	}
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod-a", metav1.GetOptions{}); err != nil {
		t.Fatalf("istiod-a went while pods used it: %v", err)
	}
	step("prune refused")
	istioctl(append(upgrade, "--prune-old")...)
	allOn(t, c, nss, "b")
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("istiod-a after --prune-old: %v", err)
	}
	if a, ok := revisions(t, istioctl)["a"]; ok {
		t.Errorf("revision a still listed after --prune-old: %+v", a)
	}
	step("pruned")
}

// restartsInFlight reads the audit log from since and returns the most workloads restarting
// at once: a workload restarts from our restart write (a patch as the revision upgrade's
// field manager) until a pod of its is deleted (the controller removing the old pod, which
// the gate waits for through the Deployment's readiness).
func restartsInFlight(t *testing.T, c *cluster.Cluster, since time.Time) int {
	t.Helper()
	f, err := os.Open(c.AuditLog())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type entry struct {
		Verb           string    `json:"verb"`
		RequestURI     string    `json:"requestURI"`
		StageTimestamp time.Time `json:"stageTimestamp"`
		ObjectRef      struct {
			Resource, Namespace, Name, Subresource string
		} `json:"objectRef"`
	}
	inFlight := map[string]bool{} // ns/workload
	most := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit log line %q: %v", sc.Text(), err)
		}
		if e.StageTimestamp.Before(since) || e.ObjectRef.Subresource != "" {
			continue
		}
		switch {
		case e.Verb == "patch" && e.ObjectRef.Resource == "deployments" && strings.Contains(e.RequestURI, "fieldManager="+migrate.FieldManager):
			inFlight[e.ObjectRef.Namespace+"/"+e.ObjectRef.Name] = true
			most = max(most, len(inFlight))
		case e.Verb == "delete" && e.ObjectRef.Resource == "pods":
			// Pods are named <deployment>-<template hash>-<suffix>.
			parts := strings.Split(e.ObjectRef.Name, "-")
			if len(parts) >= 3 {
				delete(inFlight, e.ObjectRef.Namespace+"/"+strings.Join(parts[:len(parts)-2], "-"))
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return most
}

func createApp(t *testing.T, c *cluster.Cluster, ns, name string) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
			},
		},
	}
	if _, err := c.Kube.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func setNodeSelector(t *testing.T, c *cluster.Cluster, ns, name string, sel map[string]string) {
	t.Helper()
	ctx := context.Background()
	d, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.NodeSelector = sel
	if _, err := c.Kube.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// podState is a pod's injecting revision and proxy image tag.
type podState struct{ uid, rev, proxy string }

// podsOf lists the live pods of a Deployment (Deployment/ns/name).
func podsOf(t *testing.T, c *cluster.Cluster, w string) []podState {
	t.Helper()
	parts := strings.Split(w, "/")
	l, err := c.Kube.CoreV1().Pods(parts[1]).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + parts[2]})
	if err != nil {
		t.Fatal(err)
	}
	var out []podState
	for _, p := range l.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		out = append(out, stateOf(&p))
	}
	if len(out) == 0 {
		t.Fatalf("%s has no pods", w)
	}
	return out
}

// stateOf reads the injector's status and the proxy's image tag of a pod.
func stateOf(p *corev1.Pod) podState {
	var st struct{ Revision string }
	_ = json.Unmarshal([]byte(p.Annotations["sidecar.istio.io/status"]), &st)
	s := podState{uid: string(p.UID), rev: st.Revision}
	for _, ctr := range p.Spec.Containers {
		if ctr.Name == "istio-proxy" {
			s.proxy = ctr.Image[strings.LastIndex(ctr.Image, ":")+1:]
		}
	}
	return s
}

func podUIDs(t *testing.T, c *cluster.Cluster, ws []string) map[string]string {
	out := map[string]string{}
	for _, w := range ws {
		out[w] = podsOf(t, c, w)[0].uid
	}
	return out
}

// allOn waits until every pod of nss is one pod per Deployment, injected by rev with rev's
// proxy (1.29.4 for a, anything newer for b).
func allOn(t *testing.T, c *cluster.Cluster, nss []string, rev string) {
	t.Helper()
	harness.Eventually(t, 60*time.Second, "every pod on revision "+rev, func() (bool, string) {
		for _, ns := range nss {
			l, err := c.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			n := 0
			for _, p := range l.Items {
				if p.DeletionTimestamp != nil {
					continue
				}
				n++
				if st := stateOf(&p); st.rev != rev || (rev == "a") != (st.proxy == "1.29.4") {
					return false, fmt.Sprintf("pod %s/%s: revision %q, proxy %q", ns, p.Name, st.rev, st.proxy)
				}
			}
			if n != 5 {
				return false, fmt.Sprintf("%s: %d pods", ns, n)
			}
		}
		return true, ""
	})
}

func revisions(t *testing.T, istioctl func(...string) string) map[string]revision.Revision {
	t.Helper()
	var list struct{ Revisions []revision.Revision }
	if err := json.Unmarshal([]byte(istioctl("x", "revision", "list", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]revision.Revision{}
	for _, r := range list.Revisions {
		out[r.Name] = r
	}
	return out
}

// interruptAfter runs bin with args, sends SIGINT once a line of its output contains
// marker, and returns its exit code and output.
func interruptAfter(t *testing.T, bin, kubeconfig, marker string, args ...string) (int, string) {
	t.Helper()
	p := harness.Istioctl{T: t, Kubeconfig: kubeconfig, Bin: bin}.Start("istioctl "+strings.Join(args, " "), args...)
	seen := p.Out.When(func(line string) bool { return strings.Contains(line, marker) })
	select {
	case <-seen:
		_ = p.Cmd.Process.Signal(syscall.SIGINT)
	case <-p.Exited():
	}
	code := p.Wait(t, 30*time.Minute)
	out := p.Out.String() + p.ErrOut.String()
	select {
	case <-seen:
	default:
		if code == 0 {
			t.Fatalf("never saw %q:\n%s", marker, out)
		}
	}
	return code, out
}
