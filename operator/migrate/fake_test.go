package migrate

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	ktesting "k8s.io/client-go/testing"

	"github.com/istioctl-installer/istioctl/operator/kube"
)

// fakeCluster is a kube.Client over client-go's fake clients, one store behind both: its
// server-side applies follow the apiserver's rules this package relies on (an apply that
// names a UID never creates an object, and is refused by another one; a resourceVersion
// is a precondition); it records every apply.
type fakeCluster struct {
	client  *kube.Client
	tracker ktesting.ObjectTracker
	mu      sync.Mutex
	applies []applied
	// beforeApply, when set, runs before each apply is judged (a change by someone else).
	beforeApply func(gvr schema.GroupVersionResource, ns, name string)
}

// applied is one server-side apply: the object and the body sent.
type applied struct {
	Resource, Namespace, Name string
	Body                      *unstructured.Unstructured
}

var fakeKinds = map[schema.GroupVersionKind]meta.RESTScope{
	{Version: "v1", Kind: "Namespace"}:                           meta.RESTScopeRoot,
	{Version: "v1", Kind: "ConfigMap"}:                           meta.RESTScopeNamespace,
	{Group: "apps", Version: "v1", Kind: "Deployment"}:           meta.RESTScopeNamespace,
	{Group: "apps", Version: "v1", Kind: "StatefulSet"}:          meta.RESTScopeNamespace,
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}:            meta.RESTScopeNamespace,
	{Version: "v1", Kind: "Pod"}:                                 meta.RESTScopeNamespace,
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"}:           meta.RESTScopeNamespace,
	{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}: meta.RESTScopeNamespace,
}

func newFakeCluster(t *testing.T, objs ...*unstructured.Unstructured) *fakeCluster {
	t.Helper()
	mapper := meta.NewDefaultRESTMapper(nil)
	scheme := runtime.NewScheme()
	lists := map[schema.GroupVersionResource]string{}
	for gvk, scope := range fakeKinds {
		mapper.Add(gvk, scope)
		scheme.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
		scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &unstructured.UnstructuredList{})
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		lists[plural] = gvk.Kind + "List"
	}
	var ros []runtime.Object
	for _, o := range objs {
		ros = append(ros, o)
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, lists, ros...)
	f := &fakeCluster{tracker: dyn.Tracker()}
	dyn.PrependReactor("patch", "*", f.onApply)
	md := metadatafake.NewSimpleMetadataClient(metadatafake.NewTestScheme())
	md.PrependReactor("get", "*", f.onMetaGet)
	md.PrependReactor("list", "*", f.onMetaList)
	f.client = &kube.Client{Dynamic: dyn, Metadata: md, Mapper: mapper}
	return f
}

// onApply answers a server-side apply as the apiserver does, for the fields this package
// writes: labels and annotations (metadata, and the pod template's).
func (f *fakeCluster) onApply(a ktesting.Action) (bool, runtime.Object, error) {
	pa := a.(ktesting.PatchActionImpl)
	if pa.GetPatchType() != types.ApplyPatchType {
		return false, nil, nil
	}
	gvr, ns, name := pa.GetResource(), pa.GetNamespace(), pa.GetName()
	body := &unstructured.Unstructured{}
	if err := json.Unmarshal(pa.GetPatch(), &body.Object); err != nil {
		return true, nil, err
	}
	f.mu.Lock()
	f.applies = append(f.applies, applied{Resource: gvr.Resource, Namespace: ns, Name: name, Body: body})
	before := f.beforeApply
	f.mu.Unlock()
	if before != nil {
		before(gvr, ns, name)
	}
	dry := len(pa.GetPatchOptions().DryRun) > 0
	gr := gvr.GroupResource()
	cur, err := f.tracker.Get(gvr, ns, name)
	if apierrors.IsNotFound(err) {
		if body.GetUID() != "" {
			return true, nil, apierrors.NewConflict(gr, name, fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", body.GetUID()))
		}
		created := body.DeepCopy()
		created.SetUID(types.UID("created-" + name))
		created.SetResourceVersion("1")
		if !dry {
			if err := f.tracker.Create(gvr, created, ns); err != nil {
				return true, nil, err
			}
		}
		return true, created, nil
	}
	if err != nil {
		return true, nil, err
	}
	live := cur.(*unstructured.Unstructured).DeepCopy()
	if rv := body.GetResourceVersion(); rv != "" && rv != live.GetResourceVersion() {
		return true, nil, apierrors.NewConflict(gr, name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	if uid := body.GetUID(); uid != "" && uid != live.GetUID() {
		return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: gvr.Group, Kind: body.GetKind()}, name,
			field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), uid, "field is immutable")})
	}
	merge(live.Object, body.Object)
	rv, _ := strconv.Atoi(live.GetResourceVersion())
	live.SetResourceVersion(strconv.Itoa(rv + 1))
	live.SetGeneration(live.GetGeneration() + 1)
	if !dry {
		if err := f.tracker.Update(gvr, live, ns); err != nil {
			return true, nil, err
		}
	}
	return true, live, nil
}

// merge sets into live the fields of body, map by map; a UID and resourceVersion are
// preconditions, not fields.
func merge(live, body map[string]any) {
	for k, v := range body {
		if k == "uid" || k == "resourceVersion" {
			continue
		}
		if m, ok := v.(map[string]any); ok {
			sub, _ := live[k].(map[string]any)
			if sub == nil {
				sub = map[string]any{}
			}
			merge(sub, m)
			live[k] = sub
			continue
		}
		live[k] = v
	}
}

func (f *fakeCluster) onMetaGet(a ktesting.Action) (bool, runtime.Object, error) {
	g := a.(ktesting.GetActionImpl)
	o, err := f.tracker.Get(g.GetResource(), g.GetNamespace(), g.GetName())
	if err != nil {
		return true, nil, err
	}
	m, err := partial(o)
	return true, m, err
}

func (f *fakeCluster) onMetaList(a ktesting.Action) (bool, runtime.Object, error) {
	l := a.(ktesting.ListActionImpl)
	gvr := l.GetResource()
	gvk := schema.GroupVersionKind{Group: gvr.Group, Version: gvr.Version}
	for k := range fakeKinds {
		if p, _ := meta.UnsafeGuessKindToResource(k); p == gvr {
			gvk = k
		}
	}
	o, err := f.tracker.List(gvr, gvk, l.GetNamespace(), metav1.ListOptions{})
	if err != nil {
		return true, nil, err
	}
	items, err := meta.ExtractList(o)
	if err != nil {
		return true, nil, err
	}
	out := &metav1.List{} // what the fake metadata client turns into its list
	for _, it := range items {
		m, err := partial(it)
		if err != nil {
			return true, nil, err
		}
		out.Items = append(out.Items, runtime.RawExtension{Object: m})
	}
	return true, out, nil
}

func partial(o runtime.Object) (*metav1.PartialObjectMetadata, error) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected %T", o)
	}
	m := &metav1.PartialObjectMetadata{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, m); err != nil {
		return nil, err
	}
	return m, nil
}

// get is the stored object (nil: none).
func (f *fakeCluster) get(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	o, err := f.tracker.Get(gvr, ns, name)
	if err != nil {
		return nil
	}
	return o.(*unstructured.Unstructured)
}

// appliesTo are the applies sent to resource ns/name.
func (f *fakeCluster) appliesTo(resource, ns, name string) []applied {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []applied
	for _, a := range f.applies {
		if a.Resource == resource && a.Namespace == ns && a.Name == name {
			out = append(out, a)
		}
	}
	return out
}

var (
	namespacesGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// namespace is Namespace name with labels, UID uid-<name> and resourceVersion 1.
func namespace(name string, labels map[string]string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": name, "uid": "uid-" + name, "resourceVersion": "1"}}}
	o.SetLabels(labels)
	return o
}

// deployment is Deployment ns/name, UID uid-<name>, resourceVersion 1.
func deployment(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": ns, "uid": "uid-" + name, "resourceVersion": "1", "generation": int64(1)}}}
}
