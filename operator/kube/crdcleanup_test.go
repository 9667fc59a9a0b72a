package kube_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

// TestFinishCRDDeletion: a deleted CRD with no custom resources goes at once when
// FinishCRDDeletion removes the apiserver's cleanup finalizer; one that still has custom
// resources is left to the apiserver, which deletes them first (a CRD created again under
// the same name finds none: nothing was orphaned); a finalizer of someone else's stays; a
// CRD not being deleted is not touched; finalizers changed since the copy was read are
// read again.
func TestFinishCRDDeletion(t *testing.T) {
	c := cluster.Get(t)
	ctx := context.Background()
	client := harness.Client(t, c)
	group := strings.ReplaceAll(c.Namespace(t), "-", "") + ".istioctl.io"
	ns := c.Namespace(t)
	crdRes := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	// create applies a CRD (kind Kind, plural kinds) with finalizers, waits until it is
	// served and returns it as listed, spec included.
	create := func(t *testing.T, kind string, finalizers ...string) (*unstructured.Unstructured, schema.GroupVersionResource) {
		t.Helper()
		plural := strings.ToLower(kind) + "s"
		crd := fixture.CRD(t, group, kind)
		crd.SetFinalizers(finalizers)
		if _, err := client.Apply(ctx, crd, kube.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = c.Dynamic.Resource(crdRes).Patch(context.Background(), crd.GetName(), "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			_ = client.Delete(context.Background(), crd, false)
		})
		gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: plural}
		deadline := time.Now().Add(20 * time.Second)
		for {
			if _, err := c.Dynamic.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{}); err == nil {
				break
			} else if time.Now().After(deadline) {
				t.Fatalf("%s never served: %v", crd.GetName(), err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		live, err := c.Dynamic.Resource(crdRes).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		live.SetGroupVersionKind(kube.CRDGVK)
		return live, gvr
	}
	get := func(name string) (*unstructured.Unstructured, bool) {
		live, err := c.Dynamic.Resource(crdRes).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, false
		}
		if err != nil {
			t.Fatal(err)
		}
		return live, true
	}
	del := func(t *testing.T, crd *unstructured.Unstructured) {
		t.Helper()
		if err := client.Delete(ctx, crd, false); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("no custom resources: gone at once", func(t *testing.T) {
		// The apiserver's finalizer races FinishCRDDeletion and may win a round; it must
		// lose at least one of five, or FinishCRDDeletion does nothing.
		ours := 0
		for i := range 5 {
			crd, _ := create(t, fmt.Sprintf("Empty%d", i))
			del(t, crd)
			done, err := client.FinishCRDDeletion(ctx, crd)
			if err != nil {
				t.Fatal(err)
			}
			if done {
				ours++
			}
			if live, there := get(crd.GetName()); there {
				t.Errorf("the CRD is still there (finished by us: %v): finalizers %v", done, live.GetFinalizers())
			}
		}
		if ours == 0 {
			t.Error("the apiserver's finalizer finished all five CRDs first: FinishCRDDeletion finished none")
		}
	})

	t.Run("metadata-only copies, as an uninstall lists CRDs: the resource from discovery", func(t *testing.T) {
		var names []string
		for i := range 3 {
			crd, _ := create(t, fmt.Sprintf("Meta%d", i))
			names = append(names, crd.GetName())
		}
		// A client whose discovery knows the new CRDs, as an uninstall's knows the CRDs it
		// found; it counts the reads of single CRDs, which a metadata-only copy needs none of.
		fresh, crdReads := countingCRDReads(t, c.Config, "/customresourcedefinitions/")
		all, err := fresh.ListMetadata(ctx, kube.CRDGVK, "")
		if err != nil {
			t.Fatal(err)
		}
		ours := 0
		for _, name := range names {
			i := slices.IndexFunc(all, func(u unstructured.Unstructured) bool { return u.GetName() == name })
			if i < 0 {
				t.Fatalf("ListMetadata did not list %s", name)
			}
			crd := &all[i]
			if _, hasSpec := crd.Object["spec"]; hasSpec || crd.GetKind() != kube.CRDGVK.Kind {
				t.Fatalf("ListMetadata gave %s %v; want kind and metadata only", crd.GetKind(), crd.Object)
			}
			if err := fresh.StartWatchCache(ctx, crd); err != nil {
				t.Fatal(err)
			}
			del(t, crd)
			done, err := fresh.FinishCRDDeletion(ctx, crd)
			if err != nil {
				t.Fatal(err)
			}
			if done {
				ours++
			}
			if live, there := get(name); there {
				t.Errorf("%s is still there (finished by us: %v): finalizers %v", name, done, live.GetFinalizers())
			}
		}
		if ours == 0 {
			t.Error("FinishCRDDeletion finished none of three metadata-only CRDs")
		}
		if n := crdReads.Load(); n != 0 {
			t.Errorf("StartWatchCache and FinishCRDDeletion of metadata-only copies read CRDs %d times, want none (the resource comes from discovery)", n)
		}
	})

	t.Run("custom resources left: the apiserver deletes them first", func(t *testing.T) {
		crd, gvr := create(t, "Full")
		cr := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "Full", "metadata": map[string]any{"name": "left", "namespace": ns}}}
		if _, err := c.Dynamic.Resource(gvr).Namespace(ns).Create(ctx, cr, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		del(t, crd)
		done, err := client.FinishCRDDeletion(ctx, crd)
		if err != nil || done {
			t.Fatalf("FinishCRDDeletion of a CRD with a custom resource: %v, %v; want left to the apiserver", done, err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			if _, there := get(crd.GetName()); !there {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the apiserver did not finish the CRD's deletion")
			}
			time.Sleep(100 * time.Millisecond)
		}
		again, _ := create(t, "Full")
		items, err := c.Dynamic.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(items.Items) != 0 {
			t.Errorf("the custom resource outlived its CRD: %d found after creating %s again", len(items.Items), again.GetName())
		}
	})

	t.Run("someone else's finalizer stays", func(t *testing.T) {
		crd, _ := create(t, "Held", "test.istioctl.io/hold")
		del(t, crd)
		if _, err := client.FinishCRDDeletion(ctx, crd); err != nil {
			t.Fatal(err)
		}
		live, there := get(crd.GetName())
		if !there || !slices.Equal(live.GetFinalizers(), []string{"test.istioctl.io/hold"}) {
			t.Errorf("want the CRD held by the other finalizer alone, got there=%v finalizers %v", there, live.GetFinalizers())
		}
	})

	t.Run("not being deleted: untouched", func(t *testing.T) {
		crd, _ := create(t, "Kept")
		done, err := client.FinishCRDDeletion(ctx, crd)
		if err != nil || done {
			t.Fatalf("FinishCRDDeletion of a CRD not deleted: %v, %v", done, err)
		}
		live, there := get(crd.GetName())
		if !there || live.GetDeletionTimestamp() != nil || len(live.GetFinalizers()) != 0 {
			t.Errorf("the CRD changed: there=%v", there)
		}
	})

	t.Run("finalizers changed since read", func(t *testing.T) {
		crd, _ := create(t, "Stale")
		stale := crd.DeepCopy()
		stale.SetFinalizers([]string{"test.istioctl.io/gone"})
		del(t, crd)
		if _, err := client.FinishCRDDeletion(ctx, stale); err != nil {
			t.Fatal(err)
		}
		if _, there := get(crd.GetName()); there {
			t.Error("the CRD is still there")
		}
	})
}
