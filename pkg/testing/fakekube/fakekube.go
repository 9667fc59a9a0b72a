// Package fakekube is a kube.Client over client-go's fake metadata and dynamic clients, for
// unit tests of what the engine deletes and writes back: it records every delete with its
// options and enforces their preconditions as the apiserver does (a conflict on a UID or
// resourceVersion that differs), and every update, judged as the apiserver judges one
// (update.go). Both clients hold the objects a test starts with (the dynamic one whole: reads,
// lists, updates); a delete sent through the metadata client removes the object from both.
package fakekube

import (
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	ktesting "k8s.io/client-go/testing"

	"github.com/istioctl-installer/istioctl/operator/kube"
)

// Delete is one delete request: the object (namespace/name of its resource) and its options.
type Delete struct {
	Resource, Namespace, Name string
	Options                   metav1.DeleteOptions
}

// Cluster holds the objects a test starts with and the deletes sent to them.
type Cluster struct {
	Client *kube.Client
	Meta   *metadatafake.FakeMetadataClient
	// Dynamic holds whole copies of the same objects (update.go): reads, updates.
	Dynamic *dynamicfake.FakeDynamicClient
	// BeforeUpdate, when set, is asked before each update is judged: an error answers it.
	BeforeUpdate func(Update) error
	mu           sync.Mutex
	deletes      []Delete
	updates      []Update
}

// New is a cluster holding objs (each with its kind, UID and resourceVersion); kinds are
// namespaced when their objects have a namespace. extra kinds are served too (cluster-scoped).
func New(objs []*unstructured.Unstructured, extra ...schema.GroupVersionKind) (*Cluster, error) {
	mapper := meta.NewDefaultRESTMapper(nil)
	scheme := metadatafake.NewTestScheme()
	var metas, whole []runtime.Object
	lists := map[schema.GroupVersionResource]string{}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if !scheme.Recognizes(gvk) {
			scheme.AddKnownTypeWithName(gvk, &metav1.PartialObjectMetadata{})
			scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &metav1.PartialObjectMetadataList{})
		}
		scope := meta.RESTScopeRoot
		if o.GetNamespace() != "" {
			scope = meta.RESTScopeNamespace
		}
		mapper.Add(o.GroupVersionKind(), scope)
		var m metav1.PartialObjectMetadata
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &m); err != nil {
			return nil, err
		}
		metas = append(metas, &m)
		whole = append(whole, o.DeepCopy())
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		lists[plural] = gvk.Kind + "List"
	}
	for _, gvk := range extra {
		mapper.Add(gvk, meta.RESTScopeRoot)
	}
	mc := metadatafake.NewSimpleMetadataClient(scheme, metas...)
	dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, whole...)
	c := &Cluster{Meta: mc, Dynamic: dc, Client: &kube.Client{Dynamic: dc, Metadata: mc, Mapper: mapper}}
	mc.PrependReactor("delete", "*", c.onDelete)
	dc.PrependReactor("update", "*", c.onUpdate)
	return c, nil
}

// onDelete records a delete and refuses it as the apiserver would when its preconditions do
// not hold; otherwise the tracker deletes.
func (c *Cluster) onDelete(a ktesting.Action) (bool, runtime.Object, error) {
	d := a.(ktesting.DeleteActionImpl)
	c.mu.Lock()
	c.deletes = append(c.deletes, Delete{Resource: d.Resource.Resource, Namespace: d.Namespace, Name: d.Name, Options: d.DeleteOptions})
	c.mu.Unlock()
	cur, err := c.Meta.Tracker().Get(d.Resource, d.Namespace, d.Name)
	if err != nil {
		return false, nil, nil // the tracker answers: not found
	}
	m, err := meta.Accessor(cur)
	if err != nil {
		return true, nil, err
	}
	gr := d.Resource.GroupResource()
	if p := d.DeleteOptions.Preconditions; p != nil {
		if p.UID != nil && *p.UID != m.GetUID() {
			return true, nil, apierrors.NewConflict(gr, d.Name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, m.GetUID()))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
			return true, nil, apierrors.NewConflict(gr, d.Name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, m.GetResourceVersion()))
		}
	}
	if len(d.DeleteOptions.DryRun) > 0 {
		return true, nil, nil
	}
	_ = c.Dynamic.Tracker().Delete(d.Resource, d.Namespace, d.Name)
	return false, nil, nil
}

// Deletes are the deletes sent so far, in order.
func (c *Cluster) Deletes() []Delete {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Delete(nil), c.deletes...)
}

// Exists says whether the cluster still holds the object of resource (plural) ns/name.
func (c *Cluster) Exists(gvr schema.GroupVersionResource, ns, name string) bool {
	_, err := c.Meta.Tracker().Get(gvr, ns, name)
	return err == nil
}
