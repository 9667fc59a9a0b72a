package install

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Stage is a group of objects applied together; the next stage waits until it is ready.
type Stage struct {
	Name    string
	Objects []*unstructured.Unstructured
}

// stages splits a component's objects: CRDs and Namespaces first (objects of a CRD's kind
// cannot be applied before it is established); webhook configurations last, so nothing the
// component installs is intercepted by its own webhooks, and no webhook exists before the
// workloads serving it are ready; everything else in between.
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
		out = append(out, Stage{Name: "definitions", Objects: first})
	}
	if len(middle) > 0 {
		out = append(out, Stage{Name: "resources", Objects: middle})
	}
	if len(last) > 0 {
		out = append(out, Stage{Name: "webhooks", Objects: last})
	}
	return out
}
