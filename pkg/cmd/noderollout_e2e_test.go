package cmd_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/skew"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// TestUpgradeNodeByNodeE2E: on 4 kwok nodes, the ambient profile installed by a 1.29.4 build
// is upgraded in place by a 1.30.0 build (this build, at 1.31, is refused the two-minor hop
// first, writing nothing). The new version asks ztunnel for 1 CPU, which node kwok-node-1,
// nearly filled by a pod of the same priority, cannot give: the run upgrades the control
// plane, then CNI node by node, then ztunnel from kwok-node-0 and stops at kwok-node-1,
// naming it and the cause, while kwok-node-2 and -3 keep their old, ready pods and
// verify-install says why the DaemonSet is mixed. Once the pod is gone, the same command
// (with --node-batch 2) completes without touching kwok-node-0 again; the DaemonSet's
// update strategy is as rendered, ours alone, and a third run writes nothing.
func TestUpgradeNodeByNodeE2E(t *testing.T) {
	c := cluster.Get(t)
	c.RequireRealIstiod(t)
	if skew.Minor(version.Version) != "1.31" {
		t.Skipf("written for the 1.31 line; this build is %s", version.Version)
	}
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	istioctl("uninstall", "--purge", "-y")
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()
	nodes := fourNodes(t, c)

	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.At("1.29.4").MustOutput("install", "-y", "--set", "profile=ambient")
	to := binAt(t, c, "1.30.0")

	// The hop first: 1.29.4 to this build's 1.31 in place crosses two minors.
	before := harness.AuditWrites(t, c)
	_, stderr, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "upgrade", "-y", "--set", "profile=ambient")
	if err == nil || !strings.Contains(err.Error(), "rule in-place-hop") || !strings.Contains(err.Error(), "Nothing was written") {
		t.Fatalf("the two-minor in-place hop was not refused: %v\n%s", err, stderr)
	}
	if w := harness.WritesBetween(before, harness.AuditWrites(t, c)); len(w) > 0 {
		t.Errorf("the refused hop wrote: %v", w)
	}

	oldZ := podsByNode(t, c, "app=ztunnel")
	hog(t, c, nodes[1])
	upgrade := []string{"upgrade", "-y", "-o", "json", "--set", "profile=ambient", "--set", "values.ztunnel.resources.requests.cpu=1"}
	start := time.Now()
	evs, err := to(append(upgrade, "--readiness-timeout", "25s")...)
	t.Logf("the stopped upgrade took %v", time.Since(start))
	if err == nil {
		t.Fatal("the upgrade went through a node whose ztunnel pod cannot be scheduled")
	}
	failedAt := ofType(evs, event.NodeBatchFailed)
	if len(failedAt) != 1 || failedAt[0].Component != "Ztunnel" || len(failedAt[0].Nodes) != 1 || failedAt[0].Nodes[0] != nodes[1] ||
		!strings.Contains(failedAt[0].Error, "stopped at node "+nodes[1]) || !strings.Contains(failedAt[0].Error, "Insufficient cpu") {
		t.Fatalf("no failed node batch naming %s and its cause: %+v", nodes[1], failedAt)
	}
	checkOrder(t, c, evs)
	z := podsByNode(t, c, "app=ztunnel")
	if p := z[nodes[0]]; p == nil || !strings.Contains(p.Spec.Containers[0].Image, ":1.30.0") || !podReady(p) {
		t.Errorf("%s has no new ready ztunnel pod: %v", nodes[0], p)
	}
	for _, n := range nodes[2:] {
		if p := z[n]; p == nil || p.UID != oldZ[n].UID || !podReady(p) {
			t.Errorf("%s lost its old ready ztunnel pod: was %v, now %v", n, oldZ[n], p)
		}
	}
	out, _, _ := harness.Run(t, "--kubeconfig", c.Kubeconfig, "verify-install")
	if !strings.Contains(out, "replaces its pods node by node") {
		t.Errorf("verify-install does not say why ztunnel's pods are mixed:\n%s", out)
	}

	// Fixed: the pod filling the node is gone; the same command continues.
	if err := c.Kube.CoreV1().Pods("kube-system").Delete(ctx, hogName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	evs, err = to(append(upgrade, "--node-batch", "2")...)
	if err != nil {
		t.Fatalf("the resumed upgrade failed: %v", err)
	}
	var batches [][]string
	for _, e := range ofType(evs, event.NodeBatchReady) {
		if e.Component == "Ztunnel" {
			batches = append(batches, e.Nodes)
		}
	}
	// kwok-node-1's pending pod may have been scheduled once the CPU was free, before the
	// run started: it is then skipped with kwok-node-0, and the old nodes make one batch.
	got := fmt.Sprint(batches)
	if got != fmt.Sprint([][]string{{nodes[1], nodes[2]}, {nodes[3]}}) && got != fmt.Sprint([][]string{{nodes[2], nodes[3]}}) {
		t.Errorf("the resumed ztunnel rollout's batches: %v", batches)
	}
	z2 := podsByNode(t, c, "app=ztunnel")
	for _, n := range nodes {
		if p := z2[n]; p == nil || !strings.Contains(p.Spec.Containers[0].Image, ":1.30.0") || !podReady(p) {
			t.Errorf("%s has no new ready ztunnel pod after the resumed upgrade: %v", n, p)
		}
	}
	if z2[nodes[0]].UID != z[nodes[0]].UID {
		t.Errorf("the resumed upgrade replaced %s's pod again", nodes[0])
	}
	ds, err := c.Kube.AppsV1().DaemonSets("istio-system").Get(ctx, "ztunnel", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := ds.Spec.UpdateStrategy; s.Type != appsv1.RollingUpdateDaemonSetStrategyType || s.RollingUpdate == nil ||
		s.RollingUpdate.MaxSurge.String() != "1" || s.RollingUpdate.MaxUnavailable.String() != "0" {
		t.Errorf("ztunnel's update strategy is not the rendered one: %+v", s)
	}
	if _, ok := ds.Annotations["install.operator.istio.io/node-rollout"]; ok {
		t.Error("the rollout's annotation is still on ztunnel")
	}
	for _, mf := range ds.ManagedFields {
		if mf.Manager != "istio-operator" && strings.Contains(mf.FieldsV1.String(), "updateStrategy") {
			t.Errorf("%s owns fields of updateStrategy", mf.Manager)
		}
	}
	before = harness.AuditWrites(t, c)
	if _, err := to(upgrade...); err != nil {
		t.Fatal(err)
	}
	if w := harness.WritesBetween(before, harness.AuditWrites(t, c)); len(w) > 0 {
		t.Errorf("an upgrade to what runs wrote: %v", w)
	}
}

// checkOrder: the control plane was ready before the first CNI pod was replaced, and every
// CNI pod was on the new version before the first ztunnel pod was replaced: from the run's
// events, and from the pods' creation times (to the second).
func checkOrder(t *testing.T, c *cluster.Cluster, evs []event.Event) {
	t.Helper()
	var pilotReady, cniFirst, cniLast, zFirst time.Time
	for _, e := range evs {
		switch {
		case e.Type == event.ComponentReady && e.Component == "Pilot":
			pilotReady = e.Time
		case e.Type == event.NodeBatchStarted && e.Component == "Cni" && cniFirst.IsZero():
			cniFirst = e.Time
		case e.Type == event.ComponentReady && e.Component == "Cni":
			cniLast = e.Time
		case e.Type == event.NodeBatchStarted && e.Component == "Ztunnel" && zFirst.IsZero():
			zFirst = e.Time
		}
	}
	if pilotReady.IsZero() || cniFirst.IsZero() || cniLast.IsZero() || zFirst.IsZero() ||
		!pilotReady.Before(cniFirst) || !cniLast.Before(zFirst) {
		t.Errorf("out of order: Pilot ready %v, first CNI batch %v, CNI ready %v, first ztunnel batch %v", pilotReady, cniFirst, cniLast, zFirst)
	}
	istiod := podsByNode(t, c, "app=istiod")
	var cpReady time.Time
	for _, p := range istiod {
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue && strings.Contains(p.Spec.Containers[0].Image, ":1.30.0") {
				cpReady = cond.LastTransitionTime.Time
			}
		}
	}
	var cniCreated, cniReadyLast, zCreated []time.Time
	for _, p := range podsByNode(t, c, "k8s-app=istio-cni-node") {
		if !strings.Contains(p.Spec.Containers[0].Image, ":1.30.0") {
			t.Errorf("CNI pod %s on %s is not on the new version", p.Name, p.Spec.NodeName)
			continue
		}
		cniCreated = append(cniCreated, p.CreationTimestamp.Time)
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				cniReadyLast = append(cniReadyLast, cond.LastTransitionTime.Time)
			}
		}
	}
	for _, p := range podsByNode(t, c, "app=ztunnel") {
		if strings.Contains(p.Spec.Containers[0].Image, ":1.30.0") {
			zCreated = append(zCreated, p.CreationTimestamp.Time)
		}
	}
	sortTimes(cniCreated, cniReadyLast, zCreated)
	if cpReady.IsZero() || len(cniCreated) != 4 || len(cniReadyLast) != 4 || len(zCreated) == 0 ||
		cniCreated[0].Before(cpReady) || zCreated[0].Before(cniReadyLast[3]) {
		t.Errorf("pods out of order: istiod ready %v, CNI created %v ready %v, ztunnel created %v", cpReady, cniCreated, cniReadyLast, zCreated)
	}
}

func sortTimes(lists ...[]time.Time) {
	for _, l := range lists {
		sort.Slice(l, func(i, j int) bool { return l[i].Before(l[j]) })
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podsByNode are the pods of istio-system matching selector, by node (the newest per node,
// leaving out those being deleted).
func podsByNode(t *testing.T, c *cluster.Cluster, selector string) map[string]*corev1.Pod {
	t.Helper()
	list, err := c.Kube.CoreV1().Pods("istio-system").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		p := &list.Items[i]
		key := p.Spec.NodeName
		if key == "" {
			key = "(unscheduled) " + p.Name
		}
		if p.DeletionTimestamp == nil && (out[key] == nil || out[key].CreationTimestamp.Before(&p.CreationTimestamp)) {
			out[key] = p
		}
	}
	return out
}

// fourNodes gives the cluster 4 kwok nodes, adding the missing ones as up.sh makes them
// (removed when the test ends, after its uninstall), and returns their names, sorted.
func fourNodes(t *testing.T, c *cluster.Cluster) []string {
	t.Helper()
	ctx := context.Background()
	list, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range list.Items {
		names = append(names, n.Name)
	}
	for i := len(names); i < 4; i++ {
		name := fmt.Sprintf("kwok-node-rollout-%d", i)
		res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110")}
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name,
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
				Labels:      map[string]string{"type": "kwok", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name}},
			Status: corev1.NodeStatus{Allocatable: res, Capacity: res,
				Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.255.0.%d", 100+i)}, {Type: corev1.NodeHostName, Address: "localhost"}}},
		}
		if _, err := c.Kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// Cleanups run last added first: this one after the uninstall registered before.
		t.Cleanup(func() { _ = c.Kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
		names = append(names, name)
	}
	sort.Strings(names)
	harness.Eventually(t, time.Minute, fmt.Sprintf("nodes %v ready", names), func() (bool, string) {
		ready := 0
		for _, name := range names {
			n, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == len(names), fmt.Sprintf("%d of nodes %v ready", ready, names)
	})
	return names[:4]
}

const hogName = "istioctl-test-cpu-hog"

// hog fills node's CPU but 0.7 cores with a pod of ztunnel's own priority (so the scheduler
// cannot preempt it), bound to the node by name: the old CNI and ztunnel pods (0.3 cores)
// stay, a ztunnel asking for 1 core does not fit.
func hog(t *testing.T, c *cluster.Cluster, node string) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: hogName, Namespace: "kube-system"},
		Spec: corev1.PodSpec{NodeName: node, PriorityClassName: "system-node-critical",
			Containers: []corev1.Container{{Name: "hog", Image: "registry.example/hog:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("31")}}}}},
	}
	if _, err := c.Kube.CoreV1().Pods("kube-system").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = c.Kube.CoreV1().Pods("kube-system").Delete(context.Background(), hogName, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
}

// ofType are the events of type typ.
func ofType(evs []event.Event, typ event.Type) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// binAt runs this tree built as version with -o json and returns its events and its
// error, for runs that are meant to fail.
func binAt(t *testing.T, c *cluster.Cluster, version string) func(args ...string) ([]event.Event, error) {
	t.Helper()
	x := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.At(version)
	return func(args ...string) ([]event.Event, error) {
		t.Helper()
		r := x.Run(args...)
		evs := harness.Events[event.Event](t, r.Stdout)
		if r.Err != nil {
			t.Logf("istioctl %s %s: %v\n%s", version, strings.Join(args, " "), r.Err, r.Stderr)
		}
		return evs, r.Err
	}
}
