package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// FieldManager is the server-side apply field manager of everything istioctl applies, as
// upstream names it.
const FieldManager = "istio-operator"

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// DryRun asks the apiserver to run admission and validation without persisting.
	DryRun bool
}

// Applied is the outcome of one server-side apply.
type Applied struct {
	// Live is the object as the apiserver returned it.
	Live *unstructured.Unstructured
	// Created says the object did not exist; Changed that the apply changed it.
	Created, Changed bool
	// TakenOver lists the fields another field manager owned that we took over, as
	// "manager: .path" lines; empty when nobody else owned what we set.
	TakenOver []string
}

// Resource maps an object's kind to the resource client for its namespace (or the cluster).
// A kind the mapper does not know yet (a CRD applied a moment ago) refreshes discovery once.
func (c *Client) Resource(gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	mapping, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		if r, ok := c.Mapper.(meta.ResettableRESTMapper); ok {
			r.Reset()
			mapping, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		}
	}
	if err != nil {
		return nil, nil, c.ExplainError(fmt.Errorf("the cluster does not serve %s: %w", gvk, err))
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if namespace == "" {
			namespace = "default"
		}
		return c.Dynamic.Resource(mapping.Resource).Namespace(namespace), mapping, nil
	}
	return c.Dynamic.Resource(mapping.Resource), mapping, nil
}

// Apply server-side applies obj as FieldManager. Fields another manager owns are taken over
// (conflicts forced, as upstream does) and reported in TakenOver.
func (c *Client) Apply(ctx context.Context, obj *unstructured.Unstructured, opts ApplyOptions) (*Applied, error) {
	ri, _, err := c.Resource(obj.GroupVersionKind(), obj.GetNamespace())
	if err != nil {
		return nil, err
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	popts := metav1.PatchOptions{FieldManager: FieldManager}
	if opts.DryRun {
		popts.DryRun = []string{metav1.DryRunAll}
	}
	before, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	created := apierrors.IsNotFound(err)
	if err != nil && !created {
		return nil, c.ExplainError(fmt.Errorf("reading %s: %w", Describe(obj), err))
	}
	res := &Applied{Created: created}
	live, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, popts)
	if apierrors.IsConflict(err) {
		res.TakenOver = conflicts(err)
		force := true
		popts.Force = &force
		live, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, popts)
	}
	if err != nil {
		return nil, c.ExplainError(fmt.Errorf("applying %s: %w", Describe(obj), err))
	}
	res.Live = live
	res.Changed = created || before.GetResourceVersion() != live.GetResourceVersion()
	return res, nil
}

// conflicts lists "manager: field" from an apply conflict error.
func conflicts(err error) []string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return []string{err.Error()}
	}
	var out []string
	for _, cause := range status.Status().Details.Causes {
		out = append(out, strings.TrimSpace(cause.Message+" "+cause.Field))
	}
	sort.Strings(out)
	return out
}

// Delete removes obj with foreground propagation; a missing object is not an error.
func (c *Client) Delete(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) error {
	ri, _, err := c.Resource(obj.GroupVersionKind(), obj.GetNamespace())
	if err != nil {
		return err
	}
	fg := metav1.DeletePropagationForeground
	opts := metav1.DeleteOptions{PropagationPolicy: &fg}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	err = ri.Delete(ctx, obj.GetName(), opts)
	if err != nil && !apierrors.IsNotFound(err) {
		return c.ExplainError(fmt.Errorf("deleting %s: %w", Describe(obj), err))
	}
	return nil
}

// Get reads the live version of obj (nil, nil when it does not exist).
func (c *Client) Get(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, _, err := c.Resource(obj.GroupVersionKind(), obj.GetNamespace())
	if err != nil {
		return nil, err
	}
	live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, c.ExplainError(fmt.Errorf("reading %s: %w", Describe(obj), err))
	}
	return live, nil
}

// List returns the objects of a kind matching selector, in every namespace for namespaced
// kinds; a kind the cluster does not serve yields nothing.
func (c *Client) List(ctx context.Context, gvk schema.GroupVersionKind, selector string) ([]unstructured.Unstructured, error) {
	mapping, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, c.ExplainError(err)
	}
	list, err := c.Dynamic.Resource(mapping.Resource).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, c.ExplainError(fmt.Errorf("listing %s: %w", mapping.Resource.Resource, err))
	}
	return list.Items, nil
}

// Describe names an object as Kind/namespace/name (Kind/name when cluster-scoped).
func Describe(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s/%s/%s", obj.GetKind(), ns, obj.GetName())
	}
	return fmt.Sprintf("%s/%s", obj.GetKind(), obj.GetName())
}
