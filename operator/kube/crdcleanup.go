package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
)

// CRDCleanupFinalizer is the finalizer the apiserver puts on a CRD being deleted; its
// controller removes it once the CRD's custom resources are gone.
const CRDCleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// FinishCRDDeletion finishes the deletion of a CRD that has no custom resources left, as
// the apiserver's CRD finalizer would, and says whether it did (not when the finalizer was
// quicker, or left the CRD to it).
//
// That finalizer handles the CRDs being deleted five at a time, and each takes two status
// writes and its lists even when there is nothing to delete: 15 Istio CRDs took 1 to 2 s
// to go, most of an uninstall. A CRD marked for deletion accepts no new custom resource
// (the apiserver refuses creates while it is terminating), so once a list of them read
// from etcd after the deletion (a list with a limit is) finds none, nothing is left for
// the finalizer to do, and removing it lets the CRD go at once. Only that finalizer is
// removed, and only while the CRD's finalizers are the ones read (a JSON patch test);
// anything else (custom resources left, a list or patch refused) leaves the CRD to the
// apiserver, which is never wrong, only slower.
func (c *Client) FinishCRDDeletion(ctx context.Context, crd *unstructured.Unstructured) (bool, error) {
	gvr, err := c.crdResource(ctx, crd)
	if errors.Is(err, errCRDGone) {
		return false, nil // the CRD went already
	}
	if err != nil {
		return false, err
	}
	left, err := c.Metadata.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
	if apierrors.IsNotFound(err) {
		return false, nil // the CRD went already
	}
	if err != nil {
		return false, fmt.Errorf("listing %s: %w", gvr.Resource, err)
	}
	if len(left.Items) > 0 {
		return false, nil
	}
	// The finalizers as the deletion left them (it appends its own), read again only when
	// they changed since crd was read.
	finalizers := append(slices.Clone(crd.GetFinalizers()), CRDCleanupFinalizer)
	if done, err := c.dropCRDCleanup(ctx, crd.GetName(), finalizers); err == nil {
		return done, nil
	}
	live, err := c.Metadata.Resource(crdResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", ref.Of(crd).String(), err)
	}
	if live.DeletionTimestamp == nil || !slices.Contains(live.Finalizers, CRDCleanupFinalizer) {
		return false, nil
	}
	return c.dropCRDCleanup(ctx, crd.GetName(), live.Finalizers)
}

var crdResource = schema.GroupVersionResource{Group: CRDGVK.Group, Version: CRDGVK.Version, Resource: "customresourcedefinitions"}

// dropCRDCleanup removes CRDCleanupFinalizer from the CRD name while its finalizers are
// finalizers (an error otherwise); a CRD already gone was not finished here.
func (c *Client) dropCRDCleanup(ctx context.Context, name string, finalizers []string) (bool, error) {
	rest := slices.DeleteFunc(slices.Clone(finalizers), func(f string) bool { return f == CRDCleanupFinalizer })
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/finalizers", "value": finalizers},
		{"op": "replace", "path": "/metadata/finalizers", "value": rest},
	})
	if err != nil {
		return false, err
	}
	_, err = c.Metadata.Resource(crdResource).Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil // the finalizer was quicker
	}
	if err != nil {
		return false, fmt.Errorf("removing the %s finalizer of CustomResourceDefinition %s: %w", CRDCleanupFinalizer, name, err)
	}
	return true, nil
}
