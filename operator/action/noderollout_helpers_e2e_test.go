package action_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// nodeCheckOrder: the control plane was ready before the first CNI pod was replaced, and every
// CNI pod was on the new version before the first ztunnel pod was replaced: from the run's
// events, and from the pods' creation times (to the second).
func nodeCheckOrder(t *testing.T, c *cluster.Cluster, evs []event.Event) {
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
	istiod := nodePodsByNode(t, c, "app=istiod")
	var cpReady time.Time
	for _, p := range istiod {
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue && strings.Contains(p.Spec.Containers[0].Image, ":1.30.0") {
				cpReady = cond.LastTransitionTime.Time
			}
		}
	}
	var cniCreated, cniReadyLast, zCreated []time.Time
	for _, p := range nodePodsByNode(t, c, "k8s-app=istio-cni-node") {
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
	for _, p := range nodePodsByNode(t, c, "app=ztunnel") {
		if strings.Contains(p.Spec.Containers[0].Image, ":1.30.0") {
			zCreated = append(zCreated, p.CreationTimestamp.Time)
		}
	}
	nodeSortTimes(cniCreated, cniReadyLast, zCreated)
	if cpReady.IsZero() || len(cniCreated) != 4 || len(cniReadyLast) != 4 || len(zCreated) == 0 ||
		cniCreated[0].Before(cpReady) || zCreated[0].Before(cniReadyLast[3]) {
		t.Errorf("pods out of order: istiod ready %v, CNI created %v ready %v, ztunnel created %v", cpReady, cniCreated, cniReadyLast, zCreated)
	}
}

func nodeSortTimes(lists ...[]time.Time) {
	for _, l := range lists {
		sort.Slice(l, func(i, j int) bool { return l[i].Before(l[j]) })
	}
}

func nodePodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// nodePodsByNode are the pods of istio-system matching selector, by node (the newest per node,
// leaving out those being deleted).
func nodePodsByNode(t *testing.T, c *cluster.Cluster, selector string) map[string]*corev1.Pod {
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

// nodeFour gives the cluster 4 kwok nodes, adding the missing ones as up.sh makes them
// (removed when the test ends, after its uninstall), and returns their names, sorted.
func nodeFour(t *testing.T, c *cluster.Cluster) []string {
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

const nodeHogName = "istioctl-test-cpu-hog"

// nodeHog fills node's CPU but 0.7 cores with a pod of ztunnel's own priority (so the scheduler
// cannot preempt it), bound to the node by name: the old CNI and ztunnel pods (0.3 cores)
// stay, a ztunnel asking for 1 core does not fit.
func nodeHog(t *testing.T, c *cluster.Cluster, node string) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: nodeHogName, Namespace: "kube-system"},
		Spec: corev1.PodSpec{NodeName: node, PriorityClassName: "system-node-critical",
			Containers: []corev1.Container{{Name: "hog", Image: "registry.example/hog:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("31")}}}}},
	}
	if _, err := c.Kube.CoreV1().Pods("kube-system").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = c.Kube.CoreV1().Pods("kube-system").Delete(context.Background(), nodeHogName, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
}
