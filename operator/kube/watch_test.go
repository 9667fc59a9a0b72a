package kube_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

// TestMetadataWatcher: a metadata watcher follows an object through its deletion (the
// deletion timestamp and finalizers it waits on, then its absence) and hands out apiVersion,
// kind and metadata only, having asked the apiserver for nothing more; the whole watcher
// still hands out whole objects. Client.Delete goes through the metadata client too (an
// object with finalizers comes back whole in the answer, not to be decoded as JSON).
func TestMetadataWatcher(t *testing.T) {
	c := cluster.Get(t)
	ctx := context.Background()
	var mu sync.Mutex
	accepts := map[string][]string{} // method -> Accept headers sent
	cfg := rest.CopyConfig(c.Config)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if strings.Contains(r.URL.Path, "/configmaps") {
				mu.Lock()
				accepts[r.Method] = append(accepts[r.Method], r.Header.Get("Accept"))
				mu.Unlock()
			}
			return next.RoundTrip(r)
		})
	})
	client, err := kube.NewClientForConfig(cfg, ownership.KubeOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	ns := c.Namespace(t)
	cm := fixture.Object(t, fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: watched
  namespace: %s
  labels: {watch-test: "yes"}
  finalizers: [istioctl.io/test-hold]
data: {big: "a body the metadata watcher must not carry"}
`, ns))
	if _, err := client.Apply(ctx, cm, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // a failed test leaves no ConfigMap held by its finalizer
		_ = unhold(client, cm)
		_ = client.Delete(context.Background(), cm, false)
	})
	const selector = "watch-test=yes"
	meta := client.NewMetadataWatcher()
	defer meta.Stop()
	whole := client.NewWatcher()
	defer whole.Stop()

	got, err := meta.Get(ctx, cm, selector)
	if err != nil || got == nil {
		t.Fatalf("metadata watcher Get = %v, %v; want the ConfigMap", got, err)
	}
	if got.GetKind() != "ConfigMap" || got.GetAPIVersion() != "v1" || got.GetName() != "watched" || got.GetNamespace() != ns {
		t.Errorf("metadata watcher Get = %s %s %s/%s; want v1 ConfigMap %s/watched", got.GetAPIVersion(), got.GetKind(), got.GetNamespace(), got.GetName(), ns)
	}
	if _, ok := got.Object["data"]; ok {
		t.Errorf("metadata watcher Get carries the body: %v", got.Object)
	}
	if len(got.GetManagedFields()) != 0 {
		t.Errorf("metadata watcher Get carries managed fields: %v", got.GetManagedFields())
	}
	if got.GetLabels()["watch-test"] != "yes" {
		t.Errorf("metadata watcher Get lost the labels: %v", got.GetLabels())
	}
	list, err := meta.List(ctx, cm.GroupVersionKind(), ns, selector)
	if err != nil || len(list) != 1 || list[0].GetKind() != "ConfigMap" {
		t.Errorf("metadata watcher List = %v, %v; want the one ConfigMap", list, err)
	}
	w, err := whole.Get(ctx, cm, selector)
	if err != nil || w == nil {
		t.Fatalf("whole watcher Get = %v, %v", w, err)
	}
	if data, _, _ := unstructured.NestedString(w.Object, "data", "big"); data == "" {
		t.Errorf("whole watcher Get lost the body: %v", w.Object)
	}

	// The deletion: the finalizer holds the object, with its deletion timestamp set.
	if err := client.Delete(ctx, cm, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, meta, func() bool {
		got, err := meta.Get(ctx, cm, selector)
		return err == nil && got != nil && got.GetDeletionTimestamp() != nil && len(got.GetFinalizers()) == 1
	}, "the deletion timestamp and the finalizer")
	if err := unhold(client, cm); err != nil {
		t.Fatal(err)
	}
	waitFor(t, meta, func() bool {
		got, err := meta.Get(ctx, cm, selector)
		return err == nil && got == nil
	}, "the ConfigMap gone")

	mu.Lock()
	defer mu.Unlock()
	metadataGets := 0
	for _, a := range accepts[http.MethodGet] {
		if strings.Contains(a, "as=PartialObjectMetadata") {
			metadataGets++
		}
	}
	if metadataGets < 1 { // the metadata watcher's watch (its initial list comes in it)
		t.Errorf("%d GET requests asked for metadata only, want at least 1 (Accept headers: %q)", metadataGets, accepts[http.MethodGet])
	}
	if len(accepts[http.MethodDelete]) != 1 || strings.HasPrefix(accepts[http.MethodDelete][0], "application/json") {
		t.Errorf("Client.Delete asked for JSON first (Accept headers: %q); want the metadata client's delete", accepts[http.MethodDelete])
	}
}

// waitFor waits up to 30 s for ok, re-judging at every change the watcher sees.
func waitFor(t *testing.T, w *kube.Watcher, ok func() bool, what string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		changed := w.Changed()
		if ok() {
			return
		}
		select {
		case <-changed:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatalf("the watcher never saw %s", what)
		}
	}
}

// unhold removes the finalizers of the ConfigMap obj.
func unhold(client *kube.Client, obj *unstructured.Unstructured) error {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	_, err := client.Dynamic.Resource(gvr).Namespace(obj.GetNamespace()).Patch(context.Background(), obj.GetName(),
		types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	return err
}
