package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
)

// ApplyFields server-side applies obj, a partial object naming only the fields to set, as
// manager (never the client's own field manager: an apply as that one that leaves fields
// out would remove them). Conflicts are forced: manager takes the fields over, every other field and its
// owner stay as they are. No applied-hash annotation is added.
func (c *Client) ApplyFields(ctx context.Context, obj *unstructured.Unstructured, manager string, dryRun bool) (*unstructured.Unstructured, error) {
	if manager == c.fieldManager {
		return nil, fmt.Errorf("ApplyFields as %s would drop the fields it leaves out", manager)
	}
	ri, _, err := c.Resource(obj.GroupVersionKind(), obj.GetNamespace())
	if err != nil {
		return nil, err
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: manager, Force: &force}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	live, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	if err != nil {
		return nil, c.ExplainError(fmt.Errorf("applying fields of %s: %w", ref.Of(obj).String(), err))
	}
	return live, nil
}
