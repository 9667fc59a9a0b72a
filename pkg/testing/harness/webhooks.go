package harness

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// NoStuckWebhooks fails the test for a webhook configuration matching selector (a label
// selector; "" for every one in the cluster) with a webhook that would block the requests
// it intercepts: failurePolicy Fail (the API's default) and a Service without a ready
// endpoint. What an interrupted or killed run must never leave behind.
func NoStuckWebhooks(t testing.TB, c *cluster.Cluster, selector string) {
	t.Helper()
	ctx := context.Background()
	opts := metav1.ListOptions{LabelSelector: selector}
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
	check := func(kind, name, hook string, policy *admissionregistrationv1.FailurePolicyType, svc *admissionregistrationv1.ServiceReference) {
		if svc == nil || (policy != nil && *policy == admissionregistrationv1.Ignore) || ready(svc.Namespace, svc.Name) {
			return
		}
		t.Errorf("%s %s: webhook %s has failurePolicy Fail and calls Service %s/%s, which has no ready endpoint: it blocks what it intercepts",
			kind, name, hook, svc.Namespace, svc.Name)
	}
	mwcs, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range mwcs.Items {
		for _, h := range w.Webhooks {
			check("MutatingWebhookConfiguration", w.Name, h.Name, h.FailurePolicy, h.ClientConfig.Service)
		}
	}
	vwcs, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range vwcs.Items {
		for _, h := range w.Webhooks {
			check("ValidatingWebhookConfiguration", w.Name, h.Name, h.FailurePolicy, h.ClientConfig.Service)
		}
	}
}
