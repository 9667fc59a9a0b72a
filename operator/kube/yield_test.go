package kube

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The manager and the rule the test yields by (as ownership gives them in the engine).
const testManager = "istio-operator"

var testFields = []ControllerField{{Kind: "ValidatingWebhookConfiguration", List: "webhooks", Path: []string{"failurePolicy"}}}

func TestYield(t *testing.T) {
	const validator = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: istio-validator-istio-system}
webhooks:
- name: rev.validation.istio.io
  failurePolicy: Ignore
  clientConfig: {service: {name: istiod, namespace: istio-system}}
- name: other.validation.istio.io
  failurePolicy: Ignore
  clientConfig: {service: {name: istiod, namespace: istio-system}, caBundle: Zm9v}
`
	// fields: the FieldsV1 JSON of one manager.
	entry := func(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	const ours = `{"f:webhooks":{"k:{\"name\":\"rev.validation.istio.io\"}":{".":{},"f:failurePolicy":{},"f:name":{}},"k:{\"name\":\"other.validation.istio.io\"}":{".":{},"f:failurePolicy":{},"f:name":{},"f:clientConfig":{"f:caBundle":{}}}}}`
	const istiodTookPolicy = `{"f:webhooks":{"k:{\"name\":\"rev.validation.istio.io\"}":{"f:failurePolicy":{},"f:clientConfig":{"f:caBundle":{}}}}}`
	for _, tc := range []struct {
		name    string
		kind    string
		managed []metav1.ManagedFieldsEntry
		yielded []string
	}{
		{"nobody else", "ValidatingWebhookConfiguration", []metav1.ManagedFieldsEntry{entry(testManager, metav1.ManagedFieldsOperationApply, ours)}, nil},
		{"istiod took one webhook's policy", "ValidatingWebhookConfiguration", []metav1.ManagedFieldsEntry{
			entry(testManager, metav1.ManagedFieldsOperationApply, ours),
			entry("pilot-discovery", metav1.ManagedFieldsOperationUpdate, istiodTookPolicy),
		}, []string{"webhooks[rev.validation.istio.io].failurePolicy (pilot-discovery)"}},
		{"istiod the only manager", "ValidatingWebhookConfiguration", []metav1.ManagedFieldsEntry{
			entry("pilot-discovery", metav1.ManagedFieldsOperationUpdate, istiodTookPolicy),
		}, []string{"webhooks[rev.validation.istio.io].failurePolicy (pilot-discovery)"}},
		{"a status writer does not count", "ValidatingWebhookConfiguration", []metav1.ManagedFieldsEntry{
			{Manager: "pilot-discovery", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(istiodTookPolicy)}},
		}, nil},
		{"other kinds keep their failurePolicy", "MutatingWebhookConfiguration", []metav1.ManagedFieldsEntry{
			entry("pilot-discovery", metav1.ManagedFieldsOperationUpdate, istiodTookPolicy),
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(validator), &obj.Object); err != nil {
				t.Fatal(err)
			}
			obj.SetKind(tc.kind)
			orig := obj.DeepCopy()
			got, yielded := Yield(obj, tc.managed, testManager, testFields)
			if strings.Join(yielded, "|") != strings.Join(tc.yielded, "|") {
				t.Fatalf("yielded %q, want %q", yielded, tc.yielded)
			}
			hooks, _, _ := unstructured.NestedSlice(got.Object, "webhooks")
			_, hasPolicy := hooks[0].(map[string]any)["failurePolicy"]
			if hasPolicy == (len(tc.yielded) > 0) {
				t.Errorf("first webhook's failurePolicy present=%v after yielding %q", hasPolicy, yielded)
			}
			if _, ok := hooks[1].(map[string]any)["failurePolicy"]; !ok {
				t.Error("the other webhook lost its failurePolicy")
			}
			if cb, _, _ := unstructured.NestedString(hooks[1].(map[string]any), "clientConfig", "caBundle"); cb != "Zm9v" {
				t.Error("the other webhook lost its caBundle")
			}
			if !equalObjects(obj, orig) {
				t.Error("Yield changed its argument")
			}
		})
	}
}

func equalObjects(a, b *unstructured.Unstructured) bool {
	ja, _ := a.MarshalJSON()
	jb, _ := b.MarshalJSON()
	return string(ja) == string(jb)
}
