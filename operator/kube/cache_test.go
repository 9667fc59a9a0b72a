package kube_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

// TestStartWatchCache: nothing builds the watch cache of a CRD's resources until it is
// asked for; StartWatchCache does, so the CRD finalizer finds it ready (cache.go). Read from
// the apiserver's own counter of cache initializations. Given the CRD with its spec (as an
// uninstall's plan lists it), it reads no CRD.
//
// The controller-manager's garbage collector and quota monitors pick up a new resource at
// their next discovery sync (every 30 s) and list it, which builds the cache too: when one
// got there before the test asked, the test starts again with a new CRD.
func TestStartWatchCache(t *testing.T) {
	c := cluster.Get(t)
	const attempts = 3
	for i := range attempts {
		if startWatchCache(t, c, fmt.Sprintf("Warm%d", i)) {
			return
		}
		t.Logf("attempt %d: something else built the watch cache before the test asked; again with a new CRD", i+1)
	}
	t.Fatalf("in %d attempts, something else always built the watch cache before the test asked", attempts)
}

// startWatchCache is one attempt of TestStartWatchCache with a CRD of its own, named after
// kind; false when something else built the cache first.
func startWatchCache(t *testing.T, c *cluster.Cluster, kind string) bool {
	ctx := context.Background()
	client, crdReads := countingCRDReads(t, c.Config, "/customresourcedefinitions")
	group := strings.ReplaceAll(c.Namespace(t), "-", "") + ".istioctl.io"
	singular := strings.ToLower(kind)
	plural := singular + "s"
	crd := fixture.CRD(t, group, kind, "v1alpha1", "v1")
	if _, err := client.Apply(ctx, crd, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Delete(context.Background(), crd, false) })
	initializations := func() int {
		raw, err := c.Kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		prefix := fmt.Sprintf(`apiserver_watch_cache_initializations_total{group=%q,resource=%q} `, group, plural)
		n := 0
		for sc := bufio.NewScanner(bytes.NewReader(raw)); sc.Scan(); {
			if v, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				fmt.Sscan(v, &n)
			}
		}
		return n
	}
	// Established: served, but nothing has asked for its resources yet.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := c.Kube.Discovery().ServerResourcesForGroupVersion(group + "/v1"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the CRD was never served")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	if n := initializations(); n != 0 {
		return false
	}
	crdReads.Store(0)
	if err := client.StartWatchCache(ctx, crd); err != nil {
		t.Fatal(err)
	}
	if n := crdReads.Load(); n != 0 {
		t.Errorf("StartWatchCache of a CRD with its spec read CRDs %d times, want none", n)
	}
	for initializations() == 0 {
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatal("StartWatchCache started no watch cache")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := client.Metadata.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: plural}).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("a list only the cache answers, after it started: %v", err)
	}
	return true
}

// TestListGoneKind: a kind whose CRD went away after discovery was cached (an interrupted
// uninstall deleted it) lists as empty, through every list path, rather than failing with
// the server's 404 (CI saw "listing gateways: the server could not find the requested
// resource" on the uninstall after an interrupted one).
func TestListGoneKind(t *testing.T) {
	c := cluster.Get(t)
	ctx := context.Background()
	client := harness.Client(t, c)
	group := strings.ReplaceAll(c.Namespace(t), "-", "") + ".istioctl.io"
	crd := fixture.Object(t, fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gones.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: gones, singular: gone, kind: Gone}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
`, group))
	if _, err := client.Apply(ctx, crd, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Delete(context.Background(), crd, false) })
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Gone"}
	deadline := time.Now().Add(20 * time.Second)
	// Until the client's discovery has the kind (served and cached).
	for {
		if _, err := client.Mapper.RESTMapping(gvk.GroupKind(), "v1"); err == nil {
			if _, err := client.List(ctx, gvk, ""); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the CRD was never served")
		}
		time.Sleep(100 * time.Millisecond)
		client.Mapper.(interface{ Reset() }).Reset()
	}
	if err := client.Delete(ctx, crd, false); err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gones"}
	for {
		_, err := client.Metadata.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the CRD was never removed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The mapper still maps the kind: the lists below reach the server and get its 404.
	if _, err := client.Mapper.RESTMapping(gvk.GroupKind(), "v1"); err != nil {
		t.Fatalf("the mapper dropped the kind, the test proves nothing: %v", err)
	}
	if items, err := client.List(ctx, gvk, ""); err != nil || len(items) != 0 {
		t.Errorf("List: %d items, %v", len(items), err)
	}
	if items, err := client.ListIn(ctx, gvk, "default", "a=b"); err != nil || len(items) != 0 {
		t.Errorf("ListIn: %d items, %v", len(items), err)
	}
	if _, err := client.ListKinds(ctx, []schema.GroupVersionKind{gvk}, ""); err != nil {
		t.Errorf("ListKinds: %v", err)
	}
	if err := client.EachMeta(ctx, gvk, "", func(*metav1.PartialObjectMetadata) {}); err != nil {
		t.Errorf("EachMeta: %v", err)
	}
	if m, err := client.ListMeta(ctx, gvk, "default"); err != nil || len(m) != 0 {
		t.Errorf("ListMeta: %d items, %v", len(m), err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

// countingCRDReads is a client of cfg that counts its GET requests whose path contains
// path (CRD reads: "/customresourcedefinitions" for lists too, ".../" for single CRDs).
func countingCRDReads(t *testing.T, cfg *rest.Config, path string) (*kube.Client, *atomic.Int32) {
	t.Helper()
	var reads atomic.Int32
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, path) {
				reads.Add(1)
			}
			return next.RoundTrip(r)
		})
	})
	client, err := kube.NewClientForConfig(cfg, ownership.KubeOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	return client, &reads
}

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
