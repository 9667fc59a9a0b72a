package fakekube

import (
	"fmt"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	ktesting "k8s.io/client-go/testing"

	"github.com/istioctl-installer/istioctl/operator/kube"
)

// Store is a kube.Client over client-go's fake dynamic client holding whole objects of the
// core kinds Namespace, Secret and ConfigMap: for unit tests of what the engine reads and
// writes in them (records, their seals). Creates get a UID and every write a new
// resourceVersion, as the apiserver gives them; the metadata client (deletes, rereads)
// reads and deletes the same objects, preconditions enforced.
type Store struct {
	Client  *kube.Client
	Dynamic *dynamicfake.FakeDynamicClient
	serial  atomic.Int64
}

// The resources a Store serves.
var (
	NamespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	SecretsGVR    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	ConfigMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// NewStore is a Store holding objs: Namespaces, Secrets, ConfigMaps, and objects of other
// kinds, which it then serves too (namespaced when they have a namespace).
func NewStore(objs ...*unstructured.Unstructured) *Store {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(kube.NamespaceGVK, meta.RESTScopeRoot)
	mapper.Add(kube.SecretGVK, meta.RESTScopeNamespace)
	mapper.Add(kube.ConfigMapGVK, meta.RESTScopeNamespace)
	lists := map[schema.GroupVersionResource]string{NamespacesGVR: "NamespaceList", SecretsGVR: "SecretList", ConfigMapsGVR: "ConfigMapList"}
	s := &Store{}
	var initial []runtime.Object
	for _, o := range objs {
		o = o.DeepCopy()
		s.stamp(o, true)
		initial = append(initial, o)
		gvk := o.GroupVersionKind()
		if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			scope := meta.RESTScopeRoot
			if o.GetNamespace() != "" {
				scope = meta.RESTScopeNamespace
			}
			mapper.Add(gvk, scope)
			m, _ := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			lists[m.Resource] = gvk.Kind + "List"
		}
	}
	s.Dynamic = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, initial...)
	s.Dynamic.PrependReactor("create", "*", func(a ktesting.Action) (bool, runtime.Object, error) {
		if o, ok := a.(ktesting.CreateAction).GetObject().(*unstructured.Unstructured); ok {
			s.stamp(o, true)
		}
		return false, nil, nil
	})
	s.Dynamic.PrependReactor("update", "*", func(a ktesting.Action) (bool, runtime.Object, error) {
		if o, ok := a.(ktesting.UpdateAction).GetObject().(*unstructured.Unstructured); ok {
			s.stamp(o, false)
		}
		return false, nil, nil
	})
	s.Dynamic.PrependReactor("patch", "*", s.onApply)
	mc := metadatafake.NewSimpleMetadataClient(metadatafake.NewTestScheme())
	mc.PrependReactor("delete", "*", s.onDelete)
	mc.PrependReactor("get", "*", s.onGetMeta)
	s.Client = &kube.Client{Dynamic: s.Dynamic, Metadata: mc, Mapper: mapper}
	return s
}

// stamp gives o a new resourceVersion and, when created, a UID.
func (s *Store) stamp(o *unstructured.Unstructured, created bool) {
	n := s.serial.Add(1)
	if created && o.GetUID() == "" {
		o.SetUID(types.UID(fmt.Sprintf("uid-%d", n)))
	}
	o.SetResourceVersion(fmt.Sprint(n))
}

// onApply creates what a server-side apply names that does not exist yet (client-go's
// tracker applies only to existing objects); a dry run persists nothing.
func (s *Store) onApply(a ktesting.Action) (bool, runtime.Object, error) {
	p, ok := a.(ktesting.PatchActionImpl)
	if !ok || p.PatchType != types.ApplyPatchType {
		return false, nil, nil
	}
	_, err := s.Dynamic.Tracker().Get(p.Resource, p.Namespace, p.Name)
	if !apierrors.IsNotFound(err) && len(p.PatchOptions.DryRun) == 0 {
		return false, nil, nil
	}
	o := &unstructured.Unstructured{}
	if err := o.UnmarshalJSON(p.Patch); err != nil {
		return true, nil, err
	}
	s.stamp(o, true)
	if len(p.PatchOptions.DryRun) > 0 {
		return true, o, nil
	}
	return true, o, s.Dynamic.Tracker().Create(p.Resource, o, p.Namespace)
}

// onDelete deletes from the dynamic client's objects, refusing as the apiserver would when
// the delete's preconditions do not hold.
func (s *Store) onDelete(a ktesting.Action) (bool, runtime.Object, error) {
	d := a.(ktesting.DeleteActionImpl)
	cur, err := s.Dynamic.Tracker().Get(d.Resource, d.Namespace, d.Name)
	if err != nil {
		return true, nil, err
	}
	m, err := meta.Accessor(cur)
	if err != nil {
		return true, nil, err
	}
	if p := d.DeleteOptions.Preconditions; p != nil {
		if (p.UID != nil && *p.UID != m.GetUID()) || (p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion()) {
			return true, nil, apierrors.NewConflict(d.Resource.GroupResource(), d.Name, fmt.Errorf("precondition failed"))
		}
	}
	if len(d.DeleteOptions.DryRun) > 0 {
		return true, nil, nil
	}
	return true, nil, s.Dynamic.Tracker().Delete(d.Resource, d.Namespace, d.Name)
}

// onGetMeta answers a metadata read from the dynamic client's objects.
func (s *Store) onGetMeta(a ktesting.Action) (bool, runtime.Object, error) {
	g := a.(ktesting.GetActionImpl)
	cur, err := s.Dynamic.Tracker().Get(g.Resource, g.Namespace, g.Name)
	if err != nil {
		return true, nil, err
	}
	u, ok := cur.(*unstructured.Unstructured)
	if !ok {
		return true, nil, fmt.Errorf("fakekube: %T held", cur)
	}
	var m metav1.PartialObjectMetadata
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &m); err != nil {
		return true, nil, err
	}
	return true, &m, nil
}
