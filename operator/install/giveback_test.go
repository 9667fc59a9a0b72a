package install

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ktesting "k8s.io/client-go/testing"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/pkg/testing/fakekube"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// managedBy is a managed-fields entry of manager (op Update), of a subresource if given.
func managedBy(manager string, op metav1.ManagedFieldsOperationType, subresource, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", Subresource: subresource,
		Time: &metav1.Time{Time: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

// preexisting is an object as another tool left it: its labels, annotations, managers.
func preexisting(apiVersion, kind, name, uid string, labels, annotations map[string]string, managed ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"mesh": "before"}}}
	o.SetAPIVersion(apiVersion)
	o.SetKind(kind)
	o.SetNamespace("istio-system")
	o.SetName(name)
	o.SetUID(types.UID(uid))
	o.SetResourceVersion("10")
	o.SetLabels(labels)
	o.SetAnnotations(annotations)
	o.SetManagedFields(managed)
	return o
}

// adopt is what a failed install's apply does to o: our labels and field manager, other
// content, a new resourceVersion.
func adopt(t *testing.T, fc *fakekube.Cluster, gvr schema.GroupVersionResource, owner ownership.Owner, o *unstructured.Unstructured) {
	t.Helper()
	cur := fc.Object(gvr, o.GetNamespace(), o.GetName())
	l := cur.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	for k, v := range owner.Labels(component.Pilot) {
		l[k] = v
	}
	cur.SetLabels(l)
	cur.Object["data"] = map[string]any{"mesh": "istioctl's"}
	cur.SetManagedFields(append(cur.GetManagedFields(), managedBy(ownership.FieldManager, metav1.ManagedFieldsOperationApply, "", `{"f:data":{}}`)))
	rv, _ := strconv.Atoi(cur.GetResourceVersion())
	cur.SetResourceVersion(strconv.Itoa(rv + 1))
	if err := fc.Dynamic.Tracker().Update(gvr, cur, cur.GetNamespace()); err != nil {
		t.Fatal(err)
	}
}

// mainManagers are the entries of an object itself (not of its subresources).
func mainManagers(o *unstructured.Unstructured) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, mf := range o.GetManagedFields() {
		if mf.Subresource == "" {
			out = append(out, mf)
		}
	}
	return out
}

// TestGiveBack: a failed install that adopted objects (Helm's, kubectl's) gives back each
// one it wrote as the snapshot taken before its first write holds it: its content, labels,
// annotations and field managers (the controller's status entry as it is now); it leaves
// untouched what it did not write, never re-creates what someone deleted, never writes what
// someone re-created; and of the objects its removal lists, only those the run created go:
// nothing that existed before the run is deleted.
func TestGiveBack(t *testing.T) {
	owner := ownership.Owner{Namespace: "istio-system", Version: "1.30.0"}
	helm := map[string]string{"meta.helm.sh/release-name": "istiod", "meta.helm.sh/release-namespace": "istio-system"}
	istiod := preexisting("apps/v1", "Deployment", "istiod", "d1", map[string]string{"app": "istiod", "app.kubernetes.io/managed-by": "Helm"}, helm,
		managedBy("helm", metav1.ManagedFieldsOperationUpdate, "", `{"f:data":{},"f:metadata":{"f:labels":{}}}`),
		managedBy("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{}}`))
	mesh := preexisting("v1", "ConfigMap", "istio", "c1", nil, nil,
		managedBy("kubectl-create", metav1.ManagedFieldsOperationUpdate, "", `{"f:data":{}}`))
	untouched := preexisting("v1", "ConfigMap", "untouched", "c2", nil, helm, managedBy("helm", metav1.ManagedFieldsOperationUpdate, "", `{"f:data":{}}`))
	gone := preexisting("v1", "ConfigMap", "gone", "c3", nil, helm, managedBy("helm", metav1.ManagedFieldsOperationUpdate, "", `{"f:data":{}}`))
	recreated := preexisting("v1", "ConfigMap", "recreated", "c4", nil, helm, managedBy("helm", metav1.ManagedFieldsOperationUpdate, "", `{"f:data":{}}`))
	fc, err := fakekube.New([]*unstructured.Unstructured{istiod, mesh, untouched, gone, recreated})
	if err != nil {
		t.Fatal(err)
	}
	fc.Client.Configure(kube.FieldManager(ownership.FieldManager))
	created := preexisting("v1", "ConfigMap", "created", "n1", owner.Labels(component.Pilot), nil,
		managedBy(ownership.FieldManager, metav1.ManagedFieldsOperationApply, "", `{"f:data":{}}`))
	rendered := func(o *unstructured.Unstructured) *unstructured.Unstructured {
		r := &unstructured.Unstructured{}
		r.SetGroupVersionKind(o.GroupVersionKind())
		r.SetNamespace(o.GetNamespace())
		r.SetName(o.GetName())
		return r
	}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName("istio-system")
	pilot, _ := component.Get(component.Pilot)
	manifests := []render.Manifest{{Instance: component.Instance{Component: pilot, Namespace: "istio-system"}, Objects: []*unstructured.Unstructured{
		ns, rendered(istiod), rendered(mesh), rendered(untouched), rendered(gone), rendered(recreated), rendered(created)}}}
	in := (&Installer{Client: fc.Client, Owner: owner}).Start()
	ctx := context.Background()

	snap, err := in.Snapshot(ctx, manifests)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range snap.objects {
		names = append(names, ref.Of(o).String())
	}
	if want := []string{"Deployment/istio-system/istiod", "ConfigMap/istio-system/istio", "ConfigMap/istio-system/untouched",
		"ConfigMap/istio-system/gone", "ConfigMap/istio-system/recreated"}; !slices.Equal(names, want) {
		t.Errorf("snapshot holds %v, want %v (what existed, whole; no namespace, nothing that did not exist)", names, want)
	}
	if got := snap.objects[0]; !reflect.DeepEqual(got.Object, istiod.Object) {
		t.Errorf("snapshot of istiod:\n%v\nwant\n%v", got.Object, istiod.Object)
	}

	// The failed run: it adopts istiod and the mesh ConfigMap and creates one; meanwhile
	// someone deletes one object and deletes and re-creates another.
	adopt(t, fc, deployments, owner, istiod)
	adopt(t, fc, configMaps, owner, mesh)
	if err := fc.Dynamic.Tracker().Create(configMaps, created, "istio-system"); err != nil {
		t.Fatal(err)
	}
	if err := fc.Dynamic.Tracker().Delete(configMaps, "istio-system", "gone"); err != nil {
		t.Fatal(err)
	}
	if err := fc.Dynamic.Tracker().Delete(configMaps, "istio-system", "recreated"); err != nil {
		t.Fatal(err)
	}
	again := recreated.DeepCopy()
	again.SetUID("c4-other")
	if err := fc.Dynamic.Tracker().Create(configMaps, again, "istio-system"); err != nil {
		t.Fatal(err)
	}

	// The first update of istiod meets a conflict (a controller wrote its status): read
	// again, tried again.
	conflicts := 0
	fc.BeforeUpdate = func(u fakekube.Update) error {
		if u.Name == "istiod" && conflicts == 0 {
			conflicts++
			return apierrors.NewConflict(deployments.GroupResource(), u.Name, errors.New("the object has been modified"))
		}
		return nil
	}
	g, err := in.PlanGiveBack(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := g.Objects(), []string{"Deployment/istio-system/istiod", "ConfigMap/istio-system/istio"}; !slices.Equal(got, want) {
		t.Errorf("gives back %v, want %v (only what the run wrote)", got, want)
	}
	sink := &recordingSink{}
	if err := in.GiveBack(ctx, sink, g); err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, e := range sink.events {
		if e.Type != event.Restored {
			t.Errorf("unexpected %s event", e.Type)
		}
		outcomes = append(outcomes, e.Object+" "+string(e.RestoreOutcome)+" "+e.Message)
	}
	if want := []string{
		"Deployment/istio-system/istiod given-back Helm release istio-system/istiod",
		"ConfigMap/istio-system/istio given-back field manager kubectl-create",
		"ConfigMap/istio-system/gone gone ",
		"ConfigMap/istio-system/recreated recreated ",
	}; !slices.Equal(outcomes, want) {
		t.Errorf("restored events:\n%q\nwant\n%q", outcomes, want)
	}

	for _, tc := range []struct {
		gvr  schema.GroupVersionResource
		snap *unstructured.Unstructured
	}{{deployments, istiod}, {configMaps, mesh}} {
		now := fc.Object(tc.gvr, "istio-system", tc.snap.GetName())
		if now == nil || now.GetUID() != tc.snap.GetUID() {
			t.Fatalf("%s: %v, want UID %s", tc.snap.GetName(), now, tc.snap.GetUID())
		}
		if !reflect.DeepEqual(now.GetLabels(), tc.snap.GetLabels()) || !reflect.DeepEqual(now.GetAnnotations(), tc.snap.GetAnnotations()) ||
			!reflect.DeepEqual(now.Object["data"], tc.snap.Object["data"]) {
			t.Errorf("%s not given back as it was: labels %v, annotations %v, data %v", tc.snap.GetName(), now.GetLabels(), now.GetAnnotations(), now.Object["data"])
		}
		if got, want := mainManagers(now), mainManagers(tc.snap); !reflect.DeepEqual(got, want) {
			t.Errorf("%s managers %+v, want %+v", tc.snap.GetName(), got, want)
		}
	}
	if got := fc.Object(deployments, "istio-system", "istiod").GetManagedFields(); len(got) != 2 || got[1].Manager != "kube-controller-manager" || got[1].Subresource != "status" {
		t.Errorf("istiod's status manager not kept: %+v", got)
	}
	for _, u := range fc.Updates() {
		if u.Object.GetUID() == "" || u.Options.FieldManager != ownership.FieldManager {
			t.Errorf("update of %s without the snapshot's UID or our field manager: %+v", u.Name, u.Options)
		}
		if u.Name != "istiod" && u.Name != "istio" {
			t.Errorf("%s was written", u.Name)
		}
	}
	if n := len(fc.Updates()); n != 5 {
		t.Errorf("%d updates, want 5 (two each, one conflict)", n)
	}
	if fc.Object(configMaps, "istio-system", "gone") != nil {
		t.Error("the restore created again what someone deleted")
	}
	if o := fc.Object(configMaps, "istio-system", "recreated"); o == nil || o.GetUID() != "c4-other" || o.GetResourceVersion() != again.GetResourceVersion() {
		t.Errorf("the restore wrote what someone re-created: %v", o)
	}

	// The removal: of what carries the install's labels now (the adopted objects too, had
	// the give-back failed), only what the run created goes.
	targets := []*unstructured.Unstructured{ours(owner, "istio", "c1", "11"), ours(owner, "created", "n1", "1")}
	adopted := ours(owner, "istiod", "d1", "11")
	adopted.SetAPIVersion("apps/v1")
	adopted.SetKind("Deployment")
	targets = append([]*unstructured.Unstructured{adopted}, targets...)
	left := snap.Without(targets)
	if len(left) != 1 || left[0].GetName() != "created" {
		t.Fatalf("the removal keeps %v of the targets, want only ConfigMap created", left)
	}
	fc2, err := fakekube.New(append(targets, ours(owner, "other", "o1", "1")))
	if err != nil {
		t.Fatal(err)
	}
	rule, err := removable(owner.UninstallSelector(false))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := (&Installer{Client: fc2.Client, Owner: owner}).Start().newPass(nil).removeBatch(ctx, left, false, Removed, rule, nil); err != nil {
		t.Fatal(err)
	}
	if d := fc2.Deletes(); len(d) != 1 || d[0].Name != "created" {
		t.Errorf("deletes %+v, want only ConfigMap created", d)
	}
	if !fc2.Exists(deployments, "istio-system", "istiod") || !fc2.Exists(configMaps, "istio-system", "istio") || fc2.Exists(configMaps, "istio-system", "created") {
		t.Error("a pre-existing object was removed, or the created one stayed")
	}
	if (*Snapshot)(nil).Without(targets) == nil {
		t.Error("no snapshot spares nothing")
	}
}

// TestSnapshotFailsOnARead: a read that fails (other than a kind not served yet) fails the
// snapshot, so that the run writes nothing it could not give back.
func TestSnapshotFailsOnARead(t *testing.T) {
	cm := preexisting("v1", "ConfigMap", "istio", "c1", nil, nil)
	fc, err := fakekube.New([]*unstructured.Unstructured{cm})
	if err != nil {
		t.Fatal(err)
	}
	fc.Dynamic.PrependReactor("get", "configmaps", func(ktesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(configMaps.GroupResource(), "istio", errors.New("no"))
	})
	notServed := &unstructured.Unstructured{}
	notServed.SetAPIVersion("networking.istio.io/v1")
	notServed.SetKind("EnvoyFilter")
	notServed.SetNamespace("istio-system")
	notServed.SetName("x")
	in := (&Installer{Client: fc.Client}).Start()
	m := []render.Manifest{{Objects: []*unstructured.Unstructured{notServed}}}
	if s, err := in.Snapshot(context.Background(), m); err != nil || len(s.objects) != 0 {
		t.Errorf("a kind not served: %v, %v", s, err)
	}
	m[0].Objects = append(m[0].Objects, cm)
	if _, err := in.Snapshot(context.Background(), m); err == nil || !apierrors.IsForbidden(err) {
		t.Errorf("a forbidden read: %v, want it to fail the snapshot", err)
	}
}
