package check

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

func TestForeignFields(t *testing.T) {
	rendered := fixture.Object(t, `{kind: ValidatingWebhookConfiguration, metadata: {name: v, labels: {app: istiod}},
  webhooks: [{name: a.istio.io, failurePolicy: Ignore, clientConfig: {caBundle: ""}, namespaceSelector: {matchLabels: {x: "1"}}}]}`)
	live := rendered.DeepCopy()
	_ = unstructured.SetNestedSlice(live.Object, []any{map[string]any{"name": "a.istio.io", "failurePolicy": "Fail",
		"clientConfig": map[string]any{"caBundle": "Q0E="}, "namespaceSelector": map[string]any{"matchLabels": map[string]any{"x": "2"}}}}, "webhooks")
	live.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "istio-operator", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:app":{}}}}`)}},
		{Manager: "pilot-discovery", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{Raw: []byte(
			`{"f:webhooks":{"k:{\"name\":\"a.istio.io\"}":{"f:failurePolicy":{},"f:clientConfig":{"f:caBundle":{}}}}}`)}},
		{Manager: "policy-engine", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: []byte(
			`{"f:metadata":{"f:labels":{"f:app":{}}},"f:webhooks":{"k:{\"name\":\"a.istio.io\"}":{"f:namespaceSelector":{"f:matchLabels":{"f:x":{}}}}}}`)}},
		{Manager: "kube-controller-manager", Subresource: "status", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:app":{}}}}`)}},
	})
	got := strings.Join(foreignFields(rendered, live), "\n")
	want := `field manager policy-engine owns .webhooks[name="a.istio.io"].namespaceSelector.matchLabels.x, which this install sets to another value: the install takes them over (the other manager may set them back)
field manager policy-engine owns .metadata.labels.app, which this install sets to the same value: both keep them, and the install's later changes conflict with it`
	if got != want {
		t.Errorf("foreignFields:\n%s\nwant:\n%s", got, want)
	}
}

func TestPDBBlocks(t *testing.T) {
	for _, tc := range []struct {
		spec     string
		replicas int
		want     string
	}{
		{`{minAvailable: 2}`, 2, "minAvailable 2 covers all the replicas"},
		{`{minAvailable: 1}`, 2, ""},
		{`{minAvailable: 1}`, 1, "minAvailable 1 covers all the replicas"},
		{`{minAvailable: "100%"}`, 3, "minAvailable 100% covers"},
		{`{minAvailable: "50%"}`, 3, ""},
		{`{maxUnavailable: 0}`, 3, "maxUnavailable 0"},
		{`{maxUnavailable: 1}`, 3, ""},
	} {
		got := blocks(fixture.Object(t, `{kind: PodDisruptionBudget, spec: `+tc.spec+`}`), tc.replicas)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s with %d replicas: %q, want %q", tc.spec, tc.replicas, got, tc.want)
		}
	}
}

func TestMutatesPods(t *testing.T) {
	for _, tc := range []struct {
		hook string
		want bool
	}{
		{`{rules: [{operations: [CREATE], resources: [pods]}]}`, true},
		{`{rules: [{operations: ["*"], resources: ["*"]}]}`, true},
		{`{rules: [{operations: [UPDATE], resources: [pods]}]}`, false},
		{`{rules: [{operations: [CREATE], resources: [services]}]}`, false},
	} {
		if got := mutatesPods(fixture.Object(t, tc.hook).Object); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.hook, got, tc.want)
		}
	}
}
