package kube

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
)

// HashAnnotation records a digest of what istioctl last applied to an object, so a
// re-install can tell, without writing, that the object is already as rendered.
const HashAnnotation = "install.operator.istio.io/applied-hash"

// ServerAnnotations are annotations istioctl, the apiserver and controllers keep, not changes
// a user makes: a dry-run diff leaves them out.
var ServerAnnotations = []string{HashAnnotation, "deprecated.daemonset.template.generation", "deployment.kubernetes.io/revision"}

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// DryRun asks the apiserver to run admission and validation without persisting.
	DryRun bool
	// Before, when Known, is what a metadata list said of the object a moment ago (nil: it
	// did not exist): Apply then skips its own read.
	Before *metav1.PartialObjectMetadata
	Known  bool
}

// Applied is the outcome of one server-side apply.
type Applied struct {
	// Live is the object as the apiserver returned it.
	Live *unstructured.Unstructured
	// Before is the object as it was, when Apply read it (not when ApplyOptions.Known).
	Before *unstructured.Unstructured
	// Created says the object did not exist; Changed that the apply changed it.
	Created, Changed bool
	// Skipped says no write was sent: the object already carries what we would apply.
	Skipped bool
	// TakenOver lists the fields another field manager owned that we took over, as
	// "manager: .path" lines; empty when nobody else owned what we set.
	TakenOver []string
	// Yielded lists the rendered fields left to the controller that owns them now (Yield).
	Yielded []string
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

// Apply server-side applies obj as the client's field manager (FieldManager). Fields another manager owns are taken over
// (conflicts forced, as upstream does) and reported in TakenOver.
func (c *Client) Apply(ctx context.Context, obj *unstructured.Unstructured, opts ApplyOptions) (*Applied, error) {
	if err := c.needManager(); err != nil {
		return nil, err
	}
	ri, _, err := c.Resource(obj.GroupVersionKind(), obj.GetNamespace())
	if err != nil {
		return nil, err
	}
	obj, hash, err := withHash(obj)
	if err != nil {
		return nil, err
	}
	popts := metav1.PatchOptions{FieldManager: c.fieldManager}
	if opts.DryRun {
		popts.DryRun = []string{metav1.DryRunAll}
	}
	res := &Applied{}
	var beforeRV string
	switch {
	case opts.Known && opts.Before == nil:
		res.Created = true
	case opts.Known && opts.Before.DeletionTimestamp == nil:
		beforeRV = opts.Before.ResourceVersion
		obj, res.Yielded = c.Yield(obj, opts.Before.ManagedFields)
		if opts.Before.Annotations[HashAnnotation] == hash && owns(opts.Before.ManagedFields, obj, c.fieldManager) {
			// Already as rendered and still ours: skip the write (an apply that changes
			// nothing is still a request).
			res.Skipped = true
			return res, nil
		}
	default:
		before, err := c.liveForApply(ctx, ri, obj)
		if err != nil {
			return nil, err
		}
		if before == nil {
			res.Created = true
			break
		}
		beforeRV = before.GetResourceVersion()
		res.Before = before
		obj, res.Yielded = c.Yield(obj, before.GetManagedFields())
		if before.GetAnnotations()[HashAnnotation] == hash && owns(before.GetManagedFields(), obj, c.fieldManager) {
			res.Live = before
			res.Skipped = true
			return res, nil
		}
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	live, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, popts)
	if apierrors.IsConflict(err) {
		res.TakenOver = conflicts(err)
		force := true
		popts.Force = &force
		live, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, popts)
	}
	if err != nil {
		return nil, c.ExplainError(fmt.Errorf("applying %s: %w", ref.Of(obj).String(), err))
	}
	res.Live = live
	res.Changed = res.Created || beforeRV != live.GetResourceVersion()
	return res, nil
}

// liveForApply reads obj's live version (nil when missing). An object being deleted (a
// prune a moment ago, finalizers still running) cannot be applied back to life:
// it waits until it is gone.
func (c *Client) liveForApply(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for {
		before, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, c.ExplainError(fmt.Errorf("reading %s: %w", ref.Of(obj).String(), err))
		}
		if before.GetDeletionTimestamp() == nil {
			return before, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s is still being deleted (finalizers %v): %w", ref.Of(obj).String(), before.GetFinalizers(), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// withHash returns a copy of obj annotated with the digest of obj itself.
func withHash(obj *unstructured.Unstructured) (*unstructured.Unstructured, string, error) {
	c := obj.DeepCopy()
	ann := c.GetAnnotations()
	delete(ann, HashAnnotation)
	if len(ann) == 0 {
		ann = nil
	}
	c.SetAnnotations(ann)
	b, err := c.MarshalJSON() // encoding/json sorts map keys: the digest is stable
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:12])
	if ann == nil {
		ann = map[string]string{}
	}
	ann[HashAnnotation] = hash
	c.SetAnnotations(ann)
	return c, hash, nil
}

// Unchanged says whether Apply of obj, given what a metadata list said of it (before),
// would skip the write: the object carries the digest of what we would apply, and we still
// own every field obj sets.
func (c *Client) Unchanged(obj *unstructured.Unstructured, before *metav1.PartialObjectMetadata) (bool, error) {
	if before == nil || before.DeletionTimestamp != nil {
		return false, nil
	}
	obj, hash, err := withHash(obj)
	if err != nil {
		return false, err
	}
	obj, _ = c.Yield(obj, before.ManagedFields)
	return before.Annotations[HashAnnotation] == hash && owns(before.ManagedFields, obj, c.fieldManager), nil
}

// owns says whether applying desired would change nothing: we still own every field desired
// sets. Owning is enough: an update that changes a field's value takes the field from its
// owner, and another applier can only change it by forcing, which takes it too. Values are
// not compared: the server defaults fields inside atomic lists (a webhook rule's scope), so
// the live value of a field we own can differ from what we sent and still be ours.
func owns(managed []metav1.ManagedFieldsEntry, desired *unstructured.Unstructured, manager string) bool {
	var ours *fieldpath.Set
	for _, mf := range managed {
		if mf.Manager == manager && mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "" && mf.FieldsV1 != nil {
			ours = &fieldpath.Set{}
			if err := ours.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
				return false
			}
		}
	}
	if ours == nil {
		return false
	}
	d := desired.DeepCopy().Object
	// apiVersion and kind are not fields of the set.
	delete(d, "apiVersion")
	delete(d, "kind")
	if md, ok := d["metadata"].(map[string]any); ok {
		delete(md, "name")
		delete(md, "namespace")
	}
	return covered(ours, d)
}

// covered walks desired: every leaf must be a member of set.
func covered(set *fieldpath.Set, desired any) bool {
	switch d := desired.(type) {
	case map[string]any:
		for k, dv := range d {
			name := k
			pe := fieldpath.PathElement{FieldName: &name}
			// A node with children is walked (a "." member only says the node itself is
			// owned too); a leaf member is owned whole.
			if child, ok := set.Children.Get(pe); ok && !isEmptyValue(dv) {
				if !covered(child, dv) {
					return false
				}
				continue
			}
			if !set.Members.Has(pe) {
				return false
			}
		}
		return true
	case []any:
		for i, item := range d {
			pe, ok := elementFor(set, item, i)
			if !ok {
				return false
			}
			if child, ok := set.Children.Get(pe); ok {
				if !covered(child, item) {
					return false
				}
				continue
			}
			if !set.Members.Has(pe) {
				return false
			}
		}
		return true
	}
	return true
}

// elementFor finds the path element of set that names list item number i with value item:
// by its keys (k:{...}), its value (v:...) or its index (i:N).
func elementFor(set *fieldpath.Set, item any, i int) (fieldpath.PathElement, bool) {
	var found fieldpath.PathElement
	ok := false
	match := func(pe fieldpath.PathElement) {
		if ok {
			return
		}
		switch {
		case pe.Key != nil:
			m, isMap := item.(map[string]any)
			if !isMap {
				return
			}
			for _, f := range *pe.Key {
				v, set := m[f.Name]
				// A key field the item leaves out was defaulted by the server (a port's
				// protocol): it cannot tell items apart.
				if set && !jsonEqual(v, f.Value.Unstructured()) {
					return
				}
			}
			found, ok = pe, true
		case pe.Value != nil:
			if jsonEqual((*pe.Value).Unstructured(), item) {
				found, ok = pe, true
			}
		case pe.Index != nil:
			if *pe.Index == i {
				found, ok = pe, true
			}
		}
	}
	set.Members.Iterate(match)
	set.Children.Iterate(match)
	return found, ok
}

func isEmptyValue(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return v == nil
}

func jsonEqual(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
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

// Delete removes obj; a missing object is not an error. Propagation is background, as
// kubectl's: the object is gone at once and the garbage collector removes what it owned
// (a Deployment's ReplicaSets and pods), so waiting for it to be gone does not wait for
// every pod to terminate.
func (c *Client) Delete(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) error {
	return c.deleteWith(ctx, obj, dryRun, nil)
}

func (c *Client) deleteWith(ctx context.Context, obj *unstructured.Unstructured, dryRun bool, pre *metav1.Preconditions) error {
	_, mapping, err := c.Resource(obj.GroupVersionKind(), obj.GetNamespace())
	if err != nil {
		return err
	}
	bg := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &bg, Preconditions: pre}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	// Through the metadata client, which does not decode the answer and asks for protobuf
	// first: an object with finalizers comes back whole (a CRD is ~100 KB of JSON), which
	// the dynamic client asked for as JSON and decoded, for nothing.
	ri := c.Metadata.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = "default"
		}
		err = ri.Namespace(ns).Delete(ctx, obj.GetName(), opts)
	} else {
		err = ri.Delete(ctx, obj.GetName(), opts)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return c.ExplainError(fmt.Errorf("deleting %s: %w", ref.Of(obj).String(), err))
	}
	return nil
}

// Annotate sets one annotation on the live object (a merge patch of metadata only).
func (c *Client) Annotate(ctx context.Context, obj *unstructured.Unstructured, key, value string) error {
	ri, _, err := c.Resource(obj.GroupVersionKind(), obj.GetNamespace())
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: value}}})
	if err != nil {
		return err
	}
	if _, err := ri.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return c.ExplainError(fmt.Errorf("annotating %s: %w", ref.Of(obj).String(), err))
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
		return nil, c.ExplainError(fmt.Errorf("reading %s: %w", ref.Of(obj).String(), err))
	}
	return live, nil
}

// ListPage is how many objects one list request asks for: a kind with many objects (the
// pods of a large cluster) comes page by page, each page within the request timeout and
// each decoded page garbage once read, rather than in one response held whole. A variable
// so that tests can page through a few objects.
var ListPage int64 = 500

// List returns the objects of a kind matching selector, in every namespace for namespaced
// kinds; a kind the cluster does not serve yields nothing.
func (c *Client) List(ctx context.Context, gvk schema.GroupVersionKind, selector string) ([]unstructured.Unstructured, error) {
	return c.ListIn(ctx, gvk, "", selector)
}

// ListIn is List within one namespace ("": every namespace; ignored for a cluster-scoped
// kind).
func (c *Client) ListIn(ctx context.Context, gvk schema.GroupVersionKind, namespace, selector string) ([]unstructured.Unstructured, error) {
	mapping, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, c.ExplainError(err)
	}
	var ri dynamic.ResourceInterface = c.Dynamic.Resource(mapping.Resource)
	if namespace != "" && mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = c.Dynamic.Resource(mapping.Resource).Namespace(namespace)
	}
	var out []unstructured.Unstructured
	opts := metav1.ListOptions{LabelSelector: selector, Limit: ListPage}
	for {
		list, err := ri.List(ctx, opts)
		if goneKind(err) {
			return nil, nil
		}
		if err != nil {
			return nil, c.ExplainError(fmt.Errorf("listing %s: %w", mapping.Resource.Resource, err))
		}
		if out == nil {
			out = list.Items
		} else {
			out = append(out, list.Items...)
		}
		if list.GetContinue() == "" {
			return out, nil
		}
		opts.Continue = list.GetContinue()
	}
}

// ListKinds lists the objects of each of kinds matching selector, the kinds at once (one
// after the other, their round trips added up), and returns them in the order of kinds,
// each object with its kind set.
func (c *Client) ListKinds(ctx context.Context, kinds []schema.GroupVersionKind, selector string) ([][]unstructured.Unstructured, error) {
	out := make([][]unstructured.Unstructured, len(kinds))
	errs := make([]error, len(kinds))
	var wg sync.WaitGroup
	for i, gvk := range kinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = c.List(ctx, gvk, selector)
			for j := range out[i] {
				out[i][j].SetGroupVersionKind(gvk)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// EachMeta calls fn with the metadata (names, labels, annotations) of every object of a kind
// matching selector, in every namespace for namespaced kinds, a page at a time: only
// metadata crosses the wire and at most a page of it is in memory, however large the
// cluster. A kind the cluster does not serve yields nothing.
func (c *Client) EachMeta(ctx context.Context, gvk schema.GroupVersionKind, selector string, fn func(*metav1.PartialObjectMetadata)) error {
	mapping, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return c.ExplainError(err)
	}
	opts := metav1.ListOptions{LabelSelector: selector, Limit: ListPage}
	for {
		list, err := c.Metadata.Resource(mapping.Resource).List(ctx, opts)
		if goneKind(err) {
			return nil
		}
		if err != nil {
			return c.ExplainError(fmt.Errorf("listing %s: %w", mapping.Resource.Resource, err))
		}
		for i := range list.Items {
			fn(&list.Items[i])
		}
		if list.Continue == "" {
			return nil
		}
		opts.Continue = list.Continue
	}
}

// ListMetadata is List of the objects' apiVersion, kind and metadata only: for what needs
// no more, of kinds whose bodies are large (a CRD is up to ~100 KB of JSON).
func (c *Client) ListMetadata(ctx context.Context, gvk schema.GroupVersionKind, selector string) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	var err error
	eachErr := c.EachMeta(ctx, gvk, selector, func(m *metav1.PartialObjectMetadata) {
		u, convErr := metadataObject(m, gvk)
		if convErr != nil {
			err = errors.Join(err, fmt.Errorf("reading the metadata of %s %s: %w", gvk.Kind, m.Name, convErr))
			return
		}
		out = append(out, *u)
	})
	return out, errors.Join(eachErr, err)
}

// goneKind tells a list answered 404: the kind's CRD went away after discovery was cached
// (an interrupted uninstall deleted it, or someone else did), so it has no objects. A list
// never answers 404 for a kind that is served.
func goneKind(err error) bool { return apierrors.IsNotFound(err) }

// ListMeta returns, by name, the metadata of every object of gvk in namespace (in the
// cluster for a cluster-scoped kind): one request tells an install which objects exist and
// which are already as rendered. A kind the cluster does not serve yet has none.
func (c *Client) ListMeta(ctx context.Context, gvk schema.GroupVersionKind, namespace string) (map[string]*metav1.PartialObjectMetadata, error) {
	_, mapping, err := c.Resource(gvk, namespace)
	if meta.IsNoMatchError(err) {
		return map[string]*metav1.PartialObjectMetadata{}, nil
	}
	if err != nil {
		return nil, err
	}
	ri := c.Metadata.Resource(mapping.Resource)
	var list *metav1.PartialObjectMetadataList
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if namespace == "" {
			namespace = "default"
		}
		list, err = ri.Namespace(namespace).List(ctx, metav1.ListOptions{})
	} else {
		list, err = ri.List(ctx, metav1.ListOptions{})
	}
	if goneKind(err) {
		return map[string]*metav1.PartialObjectMetadata{}, nil
	}
	if err != nil {
		return nil, c.ExplainError(fmt.Errorf("listing %s: %w", mapping.Resource.Resource, err))
	}
	out := make(map[string]*metav1.PartialObjectMetadata, len(list.Items))
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out, nil
}
