package tag

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/objdiff"
)

// Change is what applying a plan did to one object.
type Change struct {
	// Object is Kind/namespace/name.
	Object string
	// Status: created, configured, unchanged or deactivated ("would be ..." in a dry run).
	Status string
	// Action is what happens to it: created, configured, unchanged, deactivated (in a dry
	// run too).
	Action event.Action
	// Fields are, in a dry run of an object that would be configured, the paths of the
	// fields that change (never values).
	Fields []string
}

// Apply writes the plan: the tag's objects by server-side apply as ownership.FieldManager, then
// (default tag) the never-match selectors on the default revision's injectors, so that
// injection never stops on the way. With dryRun the apiserver checks everything and
// nothing is written.
func (p *Plan) Apply(ctx context.Context, c *kube.Client, dryRun bool) ([]Change, error) {
	var out []Change
	for _, o := range p.Objects {
		r, err := c.Apply(ctx, o, kube.ApplyOptions{DryRun: dryRun})
		if err != nil {
			return out, err
		}
		changed := r.Changed
		if dryRun && !r.Created && r.Before != nil {
			// A dry run changes no resource version: compare what the server says the
			// object would become with what it is.
			diff, err := objdiff.Diff(r.Before, r.Live, kube.ServerAnnotations...)
			if err != nil {
				return out, err
			}
			changed = diff != ""
		}
		var fields []string
		if dryRun && changed && r.Before != nil {
			fields = objdiff.Fields(r.Before, r.Live, kube.ServerAnnotations...)
		}
		action := event.ActionUnchanged
		switch {
		case r.Created:
			action = event.ActionCreated
		case changed:
			action = event.ActionConfigured
		}
		out = append(out, Change{Object: ref.Of(o).String(), Status: would(action, dryRun), Action: action, Fields: fields})
	}
	for _, w := range p.Deactivate {
		if _, err := c.ApplyFields(ctx, deactivation(w), DeactivationManager, dryRun); err != nil {
			return out, err
		}
		out = append(out, Change{Object: ref.Of(w).String(), Status: would(event.ActionDeactivated, dryRun), Action: event.ActionDeactivated})
	}
	return out, nil
}

// would words an action as the applied events do: "would be created" in a dry run.
func would(a event.Action, dryRun bool) string {
	if dryRun && a != event.ActionUnchanged {
		return "would be " + string(a)
	}
	return string(a)
}

// deactivation is the partial object that sets only the never-match selectors of w's
// webhooks (its webhooks list is a map keyed by name).
func deactivation(w *unstructured.Unstructured) *unstructured.Unstructured {
	hooks, _, _ := unstructured.NestedSlice(w.Object, "webhooks")
	var items []any
	for _, h := range hooks {
		m, _ := h.(map[string]any)
		items = append(items, map[string]any{"name": m["name"], "namespaceSelector": neverMatch(), "objectSelector": neverMatch()})
	}
	p := &unstructured.Unstructured{Object: map[string]any{"webhooks": items}}
	p.SetGroupVersionKind(kube.MutatingWebhookGVK)
	p.SetName(w.GetName())
	return p
}
