package install

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// leaseGVK is the kind of istiod's newer leader elections.
var leaseGVK = schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}

// istiodWrite says whether a purge target is one of the objects istiod wrote
// (ownership.IstiodWrites) rather than one an install applied: they go last, once istiod
// has stopped.
func istiodWrite(o *unstructured.Unstructured) bool {
	return o.GetLabels()[ownership.LabelManaged] == "" &&
		ownership.WrittenByIstiod(o.GetKind(), o.GetNamespace(), o.GetName(), o.GetNamespace())
}

// istiodWrites lists what istiod wrote in the cluster (every namespace) and in the control
// plane namespaces given, metadata only.
func istiodWrites(ctx context.Context, c *kube.Client, istioNamespaces []string) ([]*unstructured.Unstructured, error) {
	kinds := map[string]schema.GroupVersionKind{"ConfigMap": kube.ConfigMapGVK, "Secret": kube.SecretGVK, "Lease": leaseGVK}
	seen := map[string]bool{}
	var out []*unstructured.Unstructured
	for _, w := range ownership.IstiodWrites {
		gvk := kinds[w.Kind]
		if seen[w.Kind] {
			continue // one list per kind serves every entry of it
		}
		seen[w.Kind] = true
		items, err := c.ListMetadata(ctx, gvk, "")
		if err != nil {
			return nil, fmt.Errorf("listing what istiod wrote: %w", err)
		}
		for i := range items {
			o := &items[i]
			for _, ns := range istioNamespaces {
				if ownership.WrittenByIstiod(w.Kind, o.GetNamespace(), o.GetName(), ns) && o.GetLabels()[ownership.LabelManaged] == "" {
					out = append(out, o)
					break
				}
			}
		}
	}
	return out, nil
}

// istiodNamespaces are the namespaces of the istiod Deployments among targets.
func istiodNamespaces(targets []*unstructured.Unstructured) []string {
	var out []string
	for _, t := range targets {
		if pilotDeployment(t) && !slices.Contains(out, t.GetNamespace()) {
			out = append(out, t.GetNamespace())
		}
	}
	return out
}

func pilotDeployment(o *unstructured.Unstructured) bool {
	return o.GetKind() == "Deployment" && o.GetLabels()[ownership.LabelComponent] == string(component.Pilot)
}

// istiodStopped waits until no pod of the istiod Deployments among deleted exists. A
// Deployment is deleted in the background: its pods go a moment later, and until then
// istiod runs and writes its objects again.
func (in *pass) istiodStopped(ctx context.Context, deleted []*unstructured.Unstructured) error {
	type podsOf struct{ ns, selector string }
	var wait []podsOf
	for _, d := range deleted {
		if !pilotDeployment(d) {
			continue
		}
		ml, _, _ := unstructured.NestedStringMap(d.Object, "spec", "selector", "matchLabels")
		if len(ml) == 0 {
			continue // listed metadata only: nothing to select its pods by
		}
		wait = append(wait, podsOf{d.GetNamespace(), labels.SelectorFromSet(ml).String()})
	}
	var left []*unstructured.Unstructured
	err := in.watch.Await(ctx, func() (bool, error) {
		left = nil
		for _, w := range wait {
			pods, err := in.watch.List(ctx, kube.PodGVK, w.ns, w.selector)
			if err != nil {
				return false, err
			}
			left = append(left, pods...)
		}
		return len(left) == 0, nil
	})
	if err != nil && err == ctx.Err() && len(left) > 0 {
		return fmt.Errorf("istiod's pod %s is still running: %w", ref.Of(left[0]).String(), err)
	}
	return err
}

// afterIstiod waits until the deleted objects are gone and istiod with them, then lists
// again what istiod wrote: batch, with what it wrote since.
func (in *pass) afterIstiod(ctx context.Context, deleted, batch []*unstructured.Unstructured, selector string) ([]*unstructured.Unstructured, error) {
	if err := in.waitGone(ctx, deleted, selector); err != nil {
		return nil, err
	}
	if err := in.istiodStopped(ctx, deleted); err != nil {
		return nil, err
	}
	now, err := istiodWrites(ctx, in.Client, append(istiodNamespaces(deleted), in.Owner.Namespace))
	if err != nil {
		return nil, err
	}
	out := append([]*unstructured.Unstructured{}, batch...)
	for _, o := range now {
		if !slices.ContainsFunc(out, func(b *unstructured.Unstructured) bool { return ref.Of(b).String() == ref.Of(o).String() }) {
			out = append(out, o)
		}
	}
	return out, nil
}
