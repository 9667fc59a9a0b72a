package install

import (
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/ownership"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestRemovalBatches: removal order is dependents first, webhook configurations before the
// workloads that serve them, CRDs last; a batch holds consecutive objects of one rank, the CRDs
// one batch (their watch caches started first, they go together: uninstall.go).
func TestRemovalBatches(t *testing.T) {
	o := func(kind, comp string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Kind: kind})
		u.SetName(strings.ToLower(kind) + "-" + comp)
		u.SetLabels(map[string]string{ownership.LabelComponent: comp})
		return u
	}
	for _, tc := range []struct {
		name string
		objs []*unstructured.Unstructured
		want string
	}{
		{"empty", nil, ""},
		{"one component", []*unstructured.Unstructured{o("Deployment", "Pilot"), o("Service", "Pilot")},
			"deployment-Pilot service-Pilot"},
		{"gateways before pilot, webhooks before its workloads, CRDs together and last",
			[]*unstructured.Unstructured{
				o("CustomResourceDefinition", "Base"), o("Deployment", "Pilot"), o("ServiceAccount", "Base"),
				o("MutatingWebhookConfiguration", "Pilot"), o("Deployment", "IngressGateways"), o("CustomResourceDefinition", "Base"),
				o("ValidatingWebhookConfiguration", "Pilot"), o("Service", "IngressGateways"),
			},
			"deployment-IngressGateways service-IngressGateways | mutatingwebhookconfiguration-Pilot validatingwebhookconfiguration-Pilot | " +
				"deployment-Pilot | serviceaccount-Base | customresourcedefinition-Base customresourcedefinition-Base"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, b := range removalBatches(InRemovalOrder(tc.objs)) {
				var names []string
				for _, o := range b {
					names = append(names, o.GetName())
				}
				got = append(got, strings.Join(names, " "))
			}
			if g := strings.Join(got, " | "); g != tc.want {
				t.Errorf("batches:\n  %s\nwant\n  %s", g, tc.want)
			}
		})
	}
}
