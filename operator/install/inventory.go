package install

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// Inventory is the one definition of what an install owns: the objects of kinds matching
// selector (an ownership selector) that istioctl applied itself (ownership.AppliedByUs: no
// owner reference, applied by istioctl's field manager; not a controller's or another
// tool's copy of our labels). Prune (Stale), uninstall (Targets) and verify-install
// (Installed) list through it, each with its own selector.
func Inventory(ctx context.Context, c *kube.Client, kinds []schema.GroupVersionKind, selector string) ([]*unstructured.Unstructured, error) {
	lists, err := c.ListKinds(ctx, kinds, selector)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, items := range lists {
		for i := range items {
			if o := &items[i]; ownership.AppliedByUs(o) {
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// InventoryMetadata is Inventory of one kind, apiVersion, kind and metadata only.
func InventoryMetadata(ctx context.Context, c *kube.Client, kind schema.GroupVersionKind, selector string) ([]*unstructured.Unstructured, error) {
	items, err := c.ListMetadata(ctx, kind, selector)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for i := range items {
		if o := &items[i]; ownership.AppliedByUs(o) {
			out = append(out, o)
		}
	}
	return out, nil
}

// Installed lists what the install labelled as its own and may prune, CRDs included, sorted
// by kind and name: what verify-install checks without a spec.
func (in *Installer) Installed(ctx context.Context) ([]*unstructured.Unstructured, error) {
	out, err := Inventory(ctx, in.Client, append([]schema.GroupVersionKind{kube.CRDGVK}, PruneKinds...), in.Owner.Selector())
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetKind()+out[i].GetName() < out[j].GetKind()+out[j].GetName() })
	return out, nil
}
