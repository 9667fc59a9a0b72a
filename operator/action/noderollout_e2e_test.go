package action_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestUpgradeNodeByNodeE2E: on 4 kwok nodes, the ambient profile installed as 1.29.4 is
// upgraded in place as 1.30.0 (as 1.31.0 it is refused the two-minor hop first, writing
// nothing). The new version asks ztunnel for 1 CPU, which node kwok-node-1, nearly filled
// by a pod of the same priority, cannot give: the run upgrades the control plane, then CNI
// node by node, then ztunnel from kwok-node-0 and stops at kwok-node-1, naming it and the
// cause, while kwok-node-2 and -3 keep their old, ready pods and verify-install says why
// the DaemonSet is mixed. Once the pod is gone, the same upgrade (NodeBatch 2) completes
// without touching kwok-node-0 again; the DaemonSet's update strategy is as rendered, ours
// alone, and a third run writes nothing.
func TestUpgradeNodeByNodeE2E(t *testing.T) {
	c := purged(t)
	c.RequireRealIstiod(t)
	ctx := context.Background()
	nodes := nodeFour(t, c)
	revMustInstall(t, c, "1.29.4", "", "profile=ambient")

	// The hop first: 1.29.4 to 1.31 in place crosses two minors.
	before := harness.AuditWrites(t, c)
	if _, err := revInstall(c, "1.31.0", "", action.Install{}, "profile=ambient"); err == nil ||
		!strings.Contains(err.Error(), "rule in-place-hop") || !strings.Contains(err.Error(), "Nothing was written") {
		t.Fatalf("the two-minor in-place hop was not refused: %v", err)
	}
	if w := harness.WritesBetween(before, harness.AuditWrites(t, c)); len(w) > 0 {
		t.Errorf("the refused hop wrote: %v", w)
	}

	oldZ := nodePodsByNode(t, c, "app=ztunnel")
	nodeHog(t, c, nodes[1])
	upgrade := func(in action.Install) (*event.Recorder, error) {
		t.Helper()
		rec, err := revInstall(c, "1.30.0", "", in, "profile=ambient", "values.ztunnel.resources.requests.cpu=1")
		if err != nil {
			t.Logf("upgrade to 1.30.0: %v", err)
		}
		return rec, err
	}
	start := time.Now()
	rec, err := upgrade(action.Install{ReadinessTimeout: 25 * time.Second})
	t.Logf("the stopped upgrade took %v", time.Since(start))
	if err == nil {
		t.Fatal("the upgrade went through a node whose ztunnel pod cannot be scheduled")
	}
	failedAt := rec.Of(event.NodeBatchFailed)
	if len(failedAt) != 1 || failedAt[0].Component != "Ztunnel" || len(failedAt[0].Nodes) != 1 || failedAt[0].Nodes[0] != nodes[1] ||
		!strings.Contains(failedAt[0].Error, "stopped at node "+nodes[1]) || !strings.Contains(failedAt[0].Error, "Insufficient cpu") {
		t.Fatalf("no failed node batch naming %s and its cause: %+v", nodes[1], failedAt)
	}
	nodeCheckOrder(t, c, rec.Events)
	z := nodePodsByNode(t, c, "app=ztunnel")
	if p := z[nodes[0]]; p == nil || !strings.Contains(p.Spec.Containers[0].Image, ":1.30.0") || !nodePodReady(p) {
		t.Errorf("%s has no new ready ztunnel pod: %v", nodes[0], p)
	}
	for _, n := range nodes[2:] {
		if p := z[n]; p == nil || p.UID != oldZ[n].UID || !nodePodReady(p) {
			t.Errorf("%s lost its old ready ztunnel pod: was %v, now %v", n, oldZ[n], p)
		}
	}
	nodeVerifySaysMixed(t, c)

	// Fixed: the pod filling the node is gone; the same upgrade continues.
	if err := c.Kube.CoreV1().Pods("kube-system").Delete(ctx, nodeHogName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rec, err = upgrade(action.Install{NodeBatch: 2})
	if err != nil {
		t.Fatalf("the resumed upgrade failed: %v", err)
	}
	var batches [][]string
	for _, e := range rec.Of(event.NodeBatchReady) {
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
	z2 := nodePodsByNode(t, c, "app=ztunnel")
	for _, n := range nodes {
		if p := z2[n]; p == nil || !strings.Contains(p.Spec.Containers[0].Image, ":1.30.0") || !nodePodReady(p) {
			t.Errorf("%s has no new ready ztunnel pod after the resumed upgrade: %v", n, p)
		}
	}
	if z2[nodes[0]].UID != z[nodes[0]].UID {
		t.Errorf("the resumed upgrade replaced %s's pod again", nodes[0])
	}
	nodeStrategyAsRendered(t, c)
	before = harness.AuditWrites(t, c)
	if _, err := upgrade(action.Install{}); err != nil {
		t.Fatal(err)
	}
	if w := harness.WritesBetween(before, harness.AuditWrites(t, c)); len(w) > 0 {
		t.Errorf("an upgrade to what runs wrote: %v", w)
	}
}

// nodeVerifySaysMixed: verify-install says why ztunnel's pods are of two templates.
func nodeVerifySaysMixed(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	res, err := action.Verify(config(c)).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, r := range res.Report.Results {
		if strings.Contains(r.Message, "replaces its pods node by node") {
			return
		}
		if !r.Passed {
			msgs = append(msgs, r.Object+": "+r.Message)
		}
	}
	t.Errorf("verify-install does not say why ztunnel's pods are mixed; what did not pass:\n%s", strings.Join(msgs, "\n"))
}

// nodeStrategyAsRendered: ztunnel's update strategy is the rendered one again, the
// rollout's annotation gone, and no other manager owns a field of it.
func nodeStrategyAsRendered(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	ds, err := c.Kube.AppsV1().DaemonSets("istio-system").Get(context.Background(), "ztunnel", metav1.GetOptions{})
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
}
