package install

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Stage is a group of objects applied together; the next stage waits for it.
type Stage struct {
	Name    string
	Objects []*unstructured.Unstructured
	// Await says the stage must be ready before the next one starts (CRDs must be
	// established before objects of their kinds can be applied).
	Await bool
}

// stages splits a component's objects: CRDs and Namespaces first, awaited; webhook
// configurations last, so nothing the component installs is intercepted by its own
// webhooks before their service exists; everything else in between.
func stages(objs []*unstructured.Unstructured) []Stage {
	var first, middle, last []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "CustomResourceDefinition", "Namespace":
			first = append(first, o)
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			last = append(last, o)
		default:
			middle = append(middle, o)
		}
	}
	var out []Stage
	if len(first) > 0 {
		out = append(out, Stage{Name: "definitions", Objects: first, Await: true})
	}
	if len(middle) > 0 {
		out = append(out, Stage{Name: "resources", Objects: middle})
	}
	if len(last) > 0 {
		out = append(out, Stage{Name: "webhooks", Objects: last})
	}
	return out
}
