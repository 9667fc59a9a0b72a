package kube

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
)

// ApplyFieldsAsRead is ApplyFields sent to the object only as read was read: read's UID and
// resourceVersion go with the apply, so the apiserver refuses (a conflict, IsChanged) one
// that changed, or was deleted or re-created, since. It never creates an object, as an
// apply without them would once the object is gone.
func (c *Client) ApplyFieldsAsRead(ctx context.Context, obj, read *unstructured.Unstructured, manager string, dryRun bool) (*unstructured.Unstructured, error) {
	if read.GetResourceVersion() == "" {
		return nil, fmt.Errorf("applying fields of %s: no resourceVersion to apply them as read", ref.Of(obj).String())
	}
	o := obj.DeepCopy()
	o.SetResourceVersion(read.GetResourceVersion())
	return c.ApplyFieldsTo(ctx, o, read.GetUID(), manager, dryRun)
}

// ApplyFieldsTo is ApplyFields sent only to the object with uid, whatever its version: a
// missing one (deleted since) is refused (a conflict, IsChanged), never created; one
// re-created with another UID is refused too (invalid: a UID never changes).
func (c *Client) ApplyFieldsTo(ctx context.Context, obj *unstructured.Unstructured, uid types.UID, manager string, dryRun bool) (*unstructured.Unstructured, error) {
	if uid == "" {
		return nil, fmt.Errorf("applying fields of %s: no UID to apply them to", ref.Of(obj).String())
	}
	o := obj.DeepCopy()
	o.SetUID(uid)
	return c.ApplyFields(ctx, o, manager, dryRun)
}
