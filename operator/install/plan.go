package install

import (
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/render"
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

// PlanOf is the plan of manifests as the plan event carries it: each component instance, in
// install order, with the components it waits for and its stages.
func PlanOf(manifests []render.Manifest) []event.PlannedComponent {
	out := make([]event.PlannedComponent, 0, len(manifests))
	for _, m := range manifests {
		p := event.PlannedComponent{Component: m.Instance.Key(), Title: componentEvent(m.Instance).Title}
		for _, parent := range m.Instance.Parents {
			p.Parents = append(p.Parents, string(parent))
		}
		for _, st := range stages(m.Objects) {
			p.Stages = append(p.Stages, event.Stage{Name: st.Name, Objects: len(st.Objects)})
		}
		out = append(out, p)
	}
	return out
}
