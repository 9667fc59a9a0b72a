package cluster_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

func TestMain(m *testing.M) { cluster.Main(m) }

// TestSmoke proves the control plane is real: a CRD becomes Established, workloads become
// Ready on kwok nodes, a Service gets a ClusterIP from the loopback service range.
func TestSmoke(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("CRD established", func(t *testing.T) {
		crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
		group := ns + ".e2e.istioctl.test"
		name := "widgets." + group
		crd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1",
			"kind":       "CustomResourceDefinition",
			"metadata":   map[string]any{"name": name},
			"spec": map[string]any{
				"group": group,
				"names": map[string]any{"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
				"scope": "Namespaced",
				"versions": []any{map[string]any{
					"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{
						"type": "object", "x-kubernetes-preserve-unknown-fields": true,
					}},
				}},
			},
		}}
		if _, err := c.Dynamic.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating CRD: %v", err)
		}
		t.Cleanup(func() { _ = c.Dynamic.Resource(crdGVR).Delete(context.Background(), name, metav1.DeleteOptions{}) })
		poll(ctx, t, "CRD "+name+" Established", func() (bool, string, error) {
			got, err := c.Dynamic.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, "", nil
				}
			}
			return false, fmt.Sprintf("conditions %v", conds), nil
		})
		// The new API is served: an object of the new kind can be created.
		wgvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
		w := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w1"}, "spec": map[string]any{"size": 3},
		}}
		poll(ctx, t, "a Widget created", func() (bool, string, error) {
			_, err := c.Dynamic.Resource(wgvr).Namespace(ns).Create(ctx, w, metav1.CreateOptions{})
			return err == nil, fmt.Sprint(err), nil
		})
	})

	labels := map[string]string{"app": "smoke"}
	podSpec := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "registry.invalid/smoke:1", Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		}}},
	}

	t.Run("Deployment ready", func(t *testing.T) {
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "smoke", Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: podSpec,
			},
		}
		if _, err := c.Kube.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating Deployment: %v", err)
		}
		poll(ctx, t, "Deployment 2/2 ready", func() (bool, string, error) {
			got, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, "smoke", metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			s := got.Status
			return s.ReadyReplicas == 2 && s.UpdatedReplicas == 2, fmt.Sprintf("status %+v", s), nil
		})
	})

	t.Run("DaemonSet ready on every node", func(t *testing.T) {
		nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) == 0 {
			t.Fatal("the cluster has no nodes")
		}
		ds := &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "smoke-ds", Namespace: ns},
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "smoke-ds"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "smoke-ds"}},
					Spec:       podSpec.Spec,
				},
			},
		}
		if _, err := c.Kube.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating DaemonSet: %v", err)
		}
		want := int32(len(nodes.Items))
		poll(ctx, t, fmt.Sprintf("DaemonSet ready on %d nodes", want), func() (bool, string, error) {
			got, err := c.Kube.AppsV1().DaemonSets(ns).Get(ctx, "smoke-ds", metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			s := got.Status
			return s.DesiredNumberScheduled == want && s.NumberReady == want, fmt.Sprintf("status %+v", s), nil
		})
	})

	t.Run("Service gets a loopback ClusterIP", func(t *testing.T) {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "smoke", Namespace: ns},
			Spec: corev1.ServiceSpec{
				Selector: labels,
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
			},
		}
		got, err := c.Kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating Service: %v", err)
		}
		ip, err := netip.ParseAddr(got.Spec.ClusterIP)
		if err != nil {
			t.Fatalf("ClusterIP %q: %v", got.Spec.ClusterIP, err)
		}
		// The cluster's range is the /16 of the kubernetes Service's address, its first.
		api, err := c.Kube.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		first, err := netip.ParseAddr(api.Spec.ClusterIP)
		if err != nil {
			t.Fatalf("the kubernetes Service's ClusterIP %q: %v", api.Spec.ClusterIP, err)
		}
		r := netip.PrefixFrom(first, 16).Masked()
		if !netip.MustParsePrefix("127.0.0.0/8").Contains(first) || !r.Contains(ip) {
			t.Errorf("ClusterIP %s is outside the cluster's loopback service range %s", ip, r)
		}
	})
}

// poll checks cond every 100ms until it holds or ctx ends; on timeout it fails the test
// with the last observation.
func poll(ctx context.Context, t *testing.T, what string, cond func() (bool, string, error)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		ok, obs, err := cond()
		last = obs
		return ok, err
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last seen: %s)", what, err, last)
	}
}

// TestPrivateClusterAPIServerRestart: a private cluster's kube-apiserver can be killed
// (requests are refused at once) and restarted with the same flags (what was written is
// still there: etcd kept running).
func TestPrivateClusterAPIServerRestart(t *testing.T) {
	c := cluster.StartPrivate(t)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "survives", Namespace: "default"}, Data: map[string]string{"a": "1"}}
	if _, err := c.Kube.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.KillAPIServer(t)
	if _, err := c.Kube.CoreV1().ConfigMaps("default").Get(ctx, "survives", metav1.GetOptions{}); err == nil {
		t.Fatal("the apiserver answered after SIGKILL")
	}
	c.RestartAPIServer(t)
	got, err := c.Kube.CoreV1().ConfigMaps("default").Get(ctx, "survives", metav1.GetOptions{})
	if err != nil || got.Data["a"] != "1" {
		t.Fatalf("after the restart: %v %v", got, err)
	}
	// Twice: the restarted process is recorded like the first one.
	c.KillAPIServer(t)
	c.RestartAPIServer(t)
	if _, err := c.Kube.CoreV1().ConfigMaps("default").Get(ctx, "survives", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}
