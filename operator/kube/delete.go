package kube

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
)

// DeleteAttempts bounds how often DeleteAsJudged reads an object that keeps changing under
// it again before it gives up.
const DeleteAttempts = 5

// DeleteAsRead deletes obj only as it was read: its UID and resourceVersion go with the
// delete as preconditions, so the apiserver refuses (a conflict, IsChanged) to delete an
// object that changed or was re-created since. A missing object is not an error; obj must
// come from a read (an object without a UID or resourceVersion is refused unsent).
func (c *Client) DeleteAsRead(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) error {
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	if uid == "" || rv == "" {
		return fmt.Errorf("deleting %s: no UID and resourceVersion to delete it as read", ref.Of(obj).String())
	}
	return c.deleteWith(ctx, obj, dryRun, &metav1.Preconditions{UID: &uid, ResourceVersion: &rv})
}

// IsChanged says a DeleteAsRead was refused because the object changed since it was read.
func IsChanged(err error) bool { return apierrors.IsConflict(err) }

// DeleteAsJudged deletes obj as it was read (DeleteAsRead). When the object changed since,
// it is read again: one with another UID was re-created by someone after the read and is
// never deleted; otherwise still (the decision's rule, given the live copy) says whether it
// is still to go, and it is deleted as read now. It returns the live copy of an object it
// left (nil: deleted, or gone already).
func (c *Client) DeleteAsJudged(ctx context.Context, obj *unstructured.Unstructured, dryRun bool, still func(live *unstructured.Unstructured) bool) (*unstructured.Unstructured, error) {
	cur := obj
	for attempt := 1; ; attempt++ {
		err := c.DeleteAsRead(ctx, cur, dryRun)
		if !IsChanged(err) {
			return nil, err
		}
		if attempt == DeleteAttempts {
			return nil, fmt.Errorf("%s changed %d times while it was being deleted: %w", ref.Of(obj).String(), attempt, err)
		}
		live, err := c.Reread(ctx, cur)
		if err != nil || live == nil {
			return nil, err
		}
		if live.GetUID() != obj.GetUID() || !still(live) {
			return live, nil
		}
		cur = live
	}
}

// Reread reads obj's metadata again, as an object of obj's kind (nil, nil when it no longer
// exists).
func (c *Client) Reread(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	m, err := c.GetMeta(ctx, obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName())
	if err != nil || m == nil {
		return nil, err
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(m)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ref.Of(obj).String(), err)
	}
	live := &unstructured.Unstructured{Object: raw}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	return live, nil
}
