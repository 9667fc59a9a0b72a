package fakekube

import (
	"fmt"
	"reflect"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktesting "k8s.io/client-go/testing"
)

// Update is one update request: the object sent and its options.
type Update struct {
	Resource, Namespace, Name string
	Object                    *unstructured.Unstructured
	Options                   metav1.UpdateOptions
}

// onUpdate judges an update as the apiserver does, as far as a restore needs: a UID or
// resourceVersion that differs from the stored object's is a conflict; managed fields sent
// replace the stored ones (an empty list keeps them, one empty entry clears them); the
// fields an update changes are its field manager's (an Update entry); the
// resourceVersion goes up.
func (c *Cluster) onUpdate(a ktesting.Action) (bool, runtime.Object, error) {
	u, ok := a.(ktesting.UpdateActionImpl)
	if !ok || u.Subresource != "" {
		return false, nil, nil
	}
	sent := u.Object.(*unstructured.Unstructured).DeepCopy()
	rec := Update{Resource: u.Resource.Resource, Namespace: u.Namespace, Name: sent.GetName(), Object: sent.DeepCopy(), Options: u.UpdateOptions}
	c.mu.Lock()
	c.updates = append(c.updates, rec)
	before := c.BeforeUpdate
	c.mu.Unlock()
	if before != nil {
		if err := before(rec); err != nil {
			return true, nil, err
		}
	}
	gr := u.Resource.GroupResource()
	cur, err := c.Dynamic.Tracker().Get(u.Resource, u.Namespace, sent.GetName())
	if err != nil {
		return true, nil, err
	}
	live := cur.(*unstructured.Unstructured)
	if uid := sent.GetUID(); uid != "" && uid != live.GetUID() {
		return true, nil, apierrors.NewConflict(gr, sent.GetName(), fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, live.GetUID()))
	}
	if rv := sent.GetResourceVersion(); rv != "" && rv != live.GetResourceVersion() {
		return true, nil, apierrors.NewConflict(gr, sent.GetName(), fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	managed := sent.GetManagedFields()
	switch {
	case len(managed) == 0:
		managed = live.GetManagedFields()
	case len(managed) == 1 && reflect.DeepEqual(managed[0], metav1.ManagedFieldsEntry{}):
		managed = nil
	}
	if !sameContent(sent, live) {
		managed = append(withoutManager(managed, u.UpdateOptions.FieldManager),
			metav1.ManagedFieldsEntry{Manager: u.UpdateOptions.FieldManager, Operation: metav1.ManagedFieldsOperationUpdate})
	}
	sent.SetManagedFields(managed)
	sent.SetUID(live.GetUID())
	rv, _ := strconv.Atoi(live.GetResourceVersion())
	sent.SetResourceVersion(strconv.Itoa(rv + 1))
	if err := c.Dynamic.Tracker().Update(u.Resource, sent, u.Namespace); err != nil {
		return true, nil, err
	}
	return true, sent.DeepCopy(), nil
}

// sameContent says two versions of an object differ in nothing but their managed fields,
// resourceVersion and UID.
func sameContent(a, b *unstructured.Unstructured) bool {
	strip := func(o *unstructured.Unstructured) map[string]any {
		c := o.DeepCopy()
		c.SetManagedFields(nil)
		c.SetResourceVersion("")
		c.SetUID("")
		return c.Object
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

func withoutManager(managed []metav1.ManagedFieldsEntry, manager string) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, mf := range managed {
		if mf.Manager != manager || mf.Operation != metav1.ManagedFieldsOperationUpdate || mf.Subresource != "" {
			out = append(out, mf)
		}
	}
	return out
}

// Updates are the updates sent so far, in order.
func (c *Cluster) Updates() []Update {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Update(nil), c.updates...)
}

// Object is the whole object of resource (plural) ns/name as the cluster holds it now (nil
// when there is none).
func (c *Cluster) Object(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	o, err := c.Dynamic.Tracker().Get(gvr, ns, name)
	if err != nil {
		return nil
	}
	return o.(*unstructured.Unstructured).DeepCopy()
}
