package fleetrun

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// The east-west gateway's address comes from a watch of its Service: a wait returns the
// address its load balancer writes into the status while it waits, and names the Service
// when none comes.
func TestGatewayAddressE2E(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	client, err := kube.NewClientForConfig(c.Config, ownership.KubeOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := gatewayAddress(ctx, client, ns, "cluster-1", 0, nil); err == nil || !strings.Contains(err.Error(), "Service "+ns+"/"+eastWestGateway) {
		t.Fatalf("no Service: %v, want an error naming it", err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: eastWestGateway, Namespace: ns},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Name: "tls", Port: 15443}}}}
	svc, err = c.Kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gatewayAddress(ctx, client, ns, "cluster-1", 300*time.Millisecond, nil); err == nil || !strings.Contains(err.Error(), "no load balancer address after 300ms") {
		t.Fatalf("no address yet: %v, want the wait to end naming it", err)
	}
	got := make(chan string, 1)
	go func() {
		addr, err := gatewayAddress(ctx, client, ns, "cluster-1", time.Minute, nil)
		if err != nil {
			t.Error(err)
		}
		got <- addr
	}()
	time.Sleep(200 * time.Millisecond) // the wait is watching by now, or reads it first: either way
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.77"}}
	if _, err := c.Kube.CoreV1().Services(ns).UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case addr := <-got:
		if addr != "192.0.2.77" {
			t.Errorf("address %q, want 192.0.2.77", addr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the address written into the Service's status was not seen within 30s")
	}
}
