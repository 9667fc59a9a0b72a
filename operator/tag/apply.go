package tag

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/objdiff"
)

// Change is what applying a plan did to one object.
type Change struct {
	// Object is Kind/namespace/name.
	Object string
	// Status: created, configured, unchanged or deactivated ("would be ..." in a dry run).
	Status string
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
		status := "unchanged"
		switch {
		case r.Created:
			status = "created"
		case changed:
			status = "configured"
		}
		out = append(out, Change{Object: kube.Describe(o), Status: would(status, dryRun)})
	}
	for _, w := range p.Deactivate {
		if _, err := c.ApplyFields(ctx, deactivation(w), DeactivationManager, dryRun); err != nil {
			return out, err
		}
		out = append(out, Change{Object: kube.Describe(w), Status: would("deactivated", dryRun)})
	}
	return out, nil
}

func would(status string, dryRun bool) string {
	if dryRun && status != "unchanged" {
		return "would be " + status
	}
	return status
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
