package kube

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
)

// ErrGone and ErrRecreated say why GiveBack left an object: it no longer exists, or it was
// deleted and created again by someone else (another UID). Neither is written.
var (
	ErrGone      = errors.New("it no longer exists")
	ErrRecreated = errors.New("it was deleted and created again by someone else (another UID)")
)

// GiveBack writes the object back as snapshot holds it (a full read made before a run
// wrote it): its content, labels and annotations, and its field managers, so that whoever
// managed it (Helm, kubectl, another tool) still owns what it owned. live is the object as
// read a moment ago (nil: GiveBack reads it). Two updates, both with the snapshot's UID as a
// precondition: the first puts the content back (the fields it changes would count as
// ours), the second, changing no field, puts the snapshot's managers back beside the live
// ones of subresources (status). A conflict reads the object again and tries again (at most
// DeleteAttempts times). It never creates or deletes: a missing object is ErrGone, one with
// another UID ErrRecreated.
func (c *Client) GiveBack(ctx context.Context, snapshot, live *unstructured.Unstructured) error {
	if err := c.needManager(); err != nil {
		return err
	}
	if snapshot.GetUID() == "" {
		return fmt.Errorf("giving back %s: the snapshot has no UID", ref.Of(snapshot).String())
	}
	ri, _, err := c.Resource(snapshot.GroupVersionKind(), snapshot.GetNamespace())
	if err != nil {
		return err
	}
	body := func(live *unstructured.Unstructured) *unstructured.Unstructured {
		b := snapshot.DeepCopy()
		b.SetResourceVersion(live.GetResourceVersion())
		b.SetManagedFields(nil) // the live ones: the second update sets them
		return b
	}
	managers := func(live *unstructured.Unstructured) *unstructured.Unstructured {
		b := live.DeepCopy()
		b.SetManagedFields(restoredManagers(snapshot.GetManagedFields(), live.GetManagedFields()))
		return b
	}
	for _, step := range []func(*unstructured.Unstructured) *unstructured.Unstructured{body, managers} {
		if live, err = c.update(ctx, ri, snapshot, live, step); err != nil {
			return err
		}
	}
	return nil
}

// update sends what(live) as an update, reading live again after a conflict (or when nil),
// and returns the object as the apiserver wrote it.
func (c *Client) update(ctx context.Context, ri dynamic.ResourceInterface, snapshot, live *unstructured.Unstructured, what func(*unstructured.Unstructured) *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	name := ref.Of(snapshot).String()
	for attempt := 1; ; attempt++ {
		if live == nil {
			var err error
			if live, err = c.Get(ctx, snapshot); err != nil {
				return nil, err
			}
		}
		switch {
		case live == nil:
			return nil, ErrGone
		case live.GetUID() != snapshot.GetUID():
			return nil, ErrRecreated
		}
		b := what(live)
		b.SetUID(snapshot.GetUID()) // the apiserver's precondition, as well as ours above
		out, err := ri.Update(ctx, b, metav1.UpdateOptions{FieldManager: c.fieldManager})
		if err == nil {
			return out, nil
		}
		if apierrors.IsNotFound(err) {
			return nil, ErrGone
		}
		if !apierrors.IsConflict(err) {
			return nil, c.ExplainError(fmt.Errorf("giving back %s: %w", name, err))
		}
		if attempt == DeleteAttempts {
			return nil, fmt.Errorf("giving back %s: it changed %d times while it was written: %w", name, attempt, err)
		}
		live = nil
	}
}

// restoredManagers are the managed fields a given-back object gets: the snapshot's of the
// object itself, and the live ones of its subresources (a controller's status, kept as it
// is now). An empty list would leave the live ones as they are, so none is one empty entry
// (which the apiserver reads as "no managers").
func restoredManagers(snapshot, live []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, mf := range snapshot {
		if mf.Subresource == "" {
			out = append(out, mf)
		}
	}
	for _, mf := range live {
		if mf.Subresource != "" {
			out = append(out, mf)
		}
	}
	if len(out) == 0 {
		return []metav1.ManagedFieldsEntry{{}}
	}
	return out
}
