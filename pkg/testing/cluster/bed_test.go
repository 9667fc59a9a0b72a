package cluster_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// TestBedIsolation: three clusters, each with its own namespace that the others do not see,
// its own context in the bed's kubeconfig and its own service range.
func TestBedIsolation(t *testing.T) {
	b := cluster.GetBed(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nss := make([]string, len(b.Clusters))
	for i, c := range b.Clusters {
		nss[i] = c.Namespace(t)
	}
	for i, c := range b.Clusters {
		for j, ns := range nss {
			_, err := c.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			switch {
			case i == j && err != nil:
				t.Errorf("cluster-%d does not see its own namespace %s: %v", i+1, ns, err)
			case i != j && !apierrors.IsNotFound(err):
				t.Errorf("cluster-%d sees namespace %s of cluster-%d (err %v), want NotFound", i+1, ns, j+1, err)
			}
		}
	}
	for i, c := range b.Clusters {
		want := fmt.Sprintf("cluster-%d", i+1)
		if c.Context != want {
			t.Errorf("cluster %d has context %q, want %q", i+1, c.Context, want)
		}
		// The bed's kubeconfig reaches the same cluster through that context.
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: b.Kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: want}).ClientConfig()
		if err != nil {
			t.Fatalf("context %s of %s: %v", want, b.Kubeconfig, err)
		}
		kube, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kube.CoreV1().Namespaces().Get(ctx, nss[i], metav1.GetOptions{}); err != nil {
			t.Errorf("through context %s: namespace %s of cluster-%d: %v", want, nss[i], i+1, err)
		}
		// Each cluster allocates from its own loopback range: 127.64/16, 127.65/16, ...
		svc, err := c.Kube.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if wantIP := fmt.Sprintf("127.%d.0.1", 64+i); svc.Spec.ClusterIP != wantIP {
			t.Errorf("cluster-%d: Service default/kubernetes has ClusterIP %s, want %s (the first of 127.%d.0.0/16)",
				i+1, svc.Spec.ClusterIP, wantIP, 64+i)
		}
	}
}

// TestBedLoadBalancer: a LoadBalancer Service in each cluster gets an address from
// 192.0.2.0/24 in its status within 2 s, a different one in every cluster; a second one
// gets another, and one that stops being a LoadBalancer loses it.
func TestBedLoadBalancer(t *testing.T) {
	b := cluster.GetBed(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	seen := map[string]string{}
	for i, c := range b.Clusters {
		ns := c.Namespace(t)
		start := time.Now()
		createLB(ctx, t, c, ns, "gw")
		ip := waitLBAddress(ctx, t, c, ns, "gw", 2*time.Second)
		t.Logf("cluster-%d: %s in %v", i+1, ip, time.Since(start).Round(time.Millisecond))
		addr, err := netip.ParseAddr(ip)
		if err != nil || !netip.MustParsePrefix("192.0.2.0/24").Contains(addr) {
			t.Errorf("cluster-%d: address %q is not in 192.0.2.0/24 (TEST-NET-1)", i+1, ip)
		}
		if other, dup := seen[ip]; dup {
			t.Errorf("cluster-%d got %s, already given in %s", i+1, ip, other)
		}
		seen[ip] = c.Context
	}

	c := b.Clusters[0]
	ns := c.Namespace(t)
	first := createAndWait(ctx, t, c, ns, "a")
	second := createAndWait(ctx, t, c, ns, "b")
	if first == second {
		t.Errorf("two LoadBalancer Services of one cluster share %s", first)
	}
	svc, err := c.Kube.CoreV1().Services(ns).Get(ctx, "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Type = corev1.ServiceTypeClusterIP
	for i := range svc.Spec.Ports {
		svc.Spec.Ports[i].NodePort = 0
	}
	if _, err := c.Kube.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "the address of a Service that is no longer a LoadBalancer cleared", func() (bool, string, error) {
		got, err := c.Kube.CoreV1().Services(ns).Get(ctx, "b", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return len(got.Status.LoadBalancer.Ingress) == 0, fmt.Sprintf("status %+v", got.Status.LoadBalancer), nil
	})
}

// TestPrivateBed: the clusters of a private bed are separate control planes (one's
// apiserver killed, the other still answers), and a restarted fakelb keeps the addresses
// it gave (a new Service gets a free one).
func TestPrivateBed(t *testing.T) {
	b := cluster.StartPrivateBed(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	one, two := b.Clusters[0], b.Clusters[1]

	before := createAndWait(ctx, t, one, "default", "before")
	one.KillComponent(t, "fakelb")
	one.RestartComponent(t, "fakelb")
	after := createAndWait(ctx, t, one, "default", "after")
	if before == after {
		t.Errorf("the restarted fakelb gave %s again", after)
	}
	got, err := one.Kube.CoreV1().Services("default").Get(ctx, "before", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ing := got.Status.LoadBalancer.Ingress; len(ing) != 1 || ing[0].IP != before {
		t.Errorf("after the restart the first Service has %+v, want %s", ing, before)
	}

	two.KillAPIServer(t)
	if _, err := two.Kube.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err == nil {
		t.Fatal("cluster-2 answered after its apiserver was killed")
	}
	if _, err := one.Kube.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("cluster-1 no longer answers once cluster-2's apiserver is gone: %v", err)
	}
}

func createLB(ctx context.Context, t *testing.T, c *cluster.Cluster, ns, name string) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "tls", Port: 15443}},
		},
	}
	if _, err := c.Kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating LoadBalancer Service %s/%s in %s: %v", ns, name, c.Context, err)
	}
}

func createAndWait(ctx context.Context, t *testing.T, c *cluster.Cluster, ns, name string) string {
	t.Helper()
	createLB(ctx, t, c, ns, name)
	return waitLBAddress(ctx, t, c, ns, name, 2*time.Second)
}

// waitLBAddress returns the Service's load balancer IP once its status has one.
func waitLBAddress(ctx context.Context, t *testing.T, c *cluster.Cluster, ns, name string, within time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var ip string
	poll(ctx, t, fmt.Sprintf("a load balancer address for %s/%s in %s within %s", ns, name, c.Context, within), func() (bool, string, error) {
		got, err := c.Kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		if ing := got.Status.LoadBalancer.Ingress; len(ing) > 0 {
			ip = ing[0].IP
			return true, "", nil
		}
		return false, "no ingress in status yet", nil
	})
	return ip
}
