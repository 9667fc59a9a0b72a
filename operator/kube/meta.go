package kube

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
)

// GetMeta reads an object's metadata (nil, nil when it does not exist, or its kind is no
// longer served).
func (c *Client) GetMeta(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*metav1.PartialObjectMetadata, error) {
	ri, err := c.metaResource(gvk, namespace)
	if err != nil || ri == nil {
		return nil, err
	}
	m, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, c.ExplainError(fmt.Errorf("reading %s %s/%s: %w", gvk.Kind, namespace, name, err))
	}
	return m, nil
}

// RemoveAnnotations removes annotations from an object with a merge patch (with dryRun,
// the server only checks it could); a missing object is not an error.
func (c *Client) RemoveAnnotations(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, keys []string, dryRun bool) error {
	ri, err := c.metaResource(gvk, namespace)
	if err != nil || ri == nil {
		return err
	}
	remove := map[string]any{}
	for _, k := range keys {
		remove[k] = nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": remove}})
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = ri.Patch(ctx, name, types.MergePatchType, patch, opts)
	if err != nil && !apierrors.IsNotFound(err) {
		return c.ExplainError(fmt.Errorf("removing annotations from %s %s/%s: %w", gvk.Kind, namespace, name, err))
	}
	return nil
}

// metaResource is the metadata client of a kind in a namespace (nil for a kind the cluster
// does not serve).
func (c *Client) metaResource(gvk schema.GroupVersionKind, namespace string) (metadata.ResourceInterface, error) {
	_, mapping, err := c.Resource(gvk, namespace)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, err
	}
	ri := c.Metadata.Resource(mapping.Resource)
	if namespace != "" && mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return ri.Namespace(namespace), nil
	}
	return ri, nil
}
