package install

import (
	"slices"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/readiness"
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
// install order, with the components it waits for (in an upgrade, upgrade, also those the
// skew rule upgrade-order puts first) and its stages.
func PlanOf(manifests []render.Manifest, upgrade bool) []event.PlannedComponent {
	out := make([]event.PlannedComponent, 0, len(manifests))
	needs := Needs(manifests, upgrade)
	for i, m := range manifests {
		p := event.PlannedComponent{Component: m.Instance.Key(), Title: componentEvent(m.Instance).Title}
		for _, parent := range m.Instance.Parents {
			p.Parents = append(p.Parents, string(parent))
		}
		for _, n := range needs[i] {
			if !slices.Contains(p.Parents, n) {
				p.Parents = append(p.Parents, n)
			}
		}
		for _, st := range stages(m.Objects) {
			p.Stages = append(p.Stages, event.Stage{Name: st.Name, Objects: len(st.Objects)})
		}
		out = append(out, p)
	}
	return out
}

// renderedServices maps each Service the manifests render ("namespace/name") to the key of
// the component instance that renders it.
func renderedServices(manifests []render.Manifest) map[string]string {
	out := map[string]string{}
	for _, m := range manifests {
		for _, o := range m.Objects {
			if o.GetKind() == "Service" && o.GetAPIVersion() == "v1" {
				out[o.GetNamespace()+"/"+o.GetName()] = m.Instance.Key()
			}
		}
	}
	return out
}

// toWaitFor is what a component's stage waits for: objs without the webhook configurations
// calling a Service that another component of the run renders. values.defaultRevision puts
// Base's istiod-default-validator on the revision's istiod, whose Service Pilot renders, and
// Pilot starts only once Base is ready: waiting there for its endpoints would wait until the
// deadline. The component serving it waits for its workloads, and for its own webhooks on
// the same Service. (Upstream waits for no webhook at all.)
func toWaitFor(objs []*unstructured.Unstructured, own string, services map[string]string) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if o.GetKind() == "MutatingWebhookConfiguration" || o.GetKind() == "ValidatingWebhookConfiguration" {
			elsewhere := false
			for _, svc := range readiness.WebhookServices(o) {
				if by, ok := services[svc.String()]; ok && by != own {
					elsewhere = true
				}
			}
			if elsewhere {
				continue
			}
		}
		out = append(out, o)
	}
	return out
}
