package cmd_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// snapshotKinds are what an install may write: every kind it applies or prunes, the CRDs
// and the namespaces.
var snapshotKinds = append([]schema.GroupVersionKind{
	{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
	{Version: "v1", Kind: "Namespace"},
}, install.PruneKinds...)

// objectVersions maps every object of snapshotKinds in the cluster (all namespaces, any labels)
// to a hash of what any writer but a controller's status update set (the object without its
// status, resourceVersion and status managedFields): two equal snapshots mean nothing of
// those kinds was created, changed or deleted in between. Status is left out because
// controllers keep writing it on their own (the HPA controller's conditions, minutes after
// an install), and istioctl never does; so are the EndpointSlices the endpointslice controller
// keeps (kwok's pods turn ready late). Install records (operator/history: one Secret
// written by every install, by design) are left out. It first waits until no namespace is
// being deleted: an earlier test's namespace going away would change objects between
// snapshots.
func objectVersions(t *testing.T, c *cluster.Cluster) map[string]string {
	t.Helper()
	settled(t, c)
	client, err := kube.NewClientForConfig(c.Config, ownership.KubeOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, gvk := range snapshotKinds {
		items, err := client.List(context.Background(), gvk, "")
		if err != nil {
			t.Fatalf("listing %s: %v", gvk.Kind, err)
		}
		for _, o := range items {
			if o.GetLabels()[history.LabelRecord] == "true" {
				continue
			}
			if o.GetLabels()["endpointslice.kubernetes.io/managed-by"] == "endpointslice-controller.k8s.io" {
				continue // the controller's own, rewritten whenever a pod's readiness moves
			}
			if istiodsOwn(&o) {
				continue // its leader elections renew every few seconds
			}
			out[gvk.Kind+"/"+o.GetNamespace()+"/"+o.GetName()] = contentHash(t, &o)
		}
	}
	return out
}

// istiodsOwn says whether only istiod ever wrote o (its root certificates, CA Secret and
// leader elections): the bed's real istiod writes them on its own.
func istiodsOwn(o *unstructured.Unstructured) bool {
	mf := o.GetManagedFields()
	for _, m := range mf {
		if m.Manager != "pilot-discovery" {
			return false
		}
	}
	return len(mf) > 0
}

// contentHash hashes o without its status, resourceVersion and the managedFields entries of
// status updates.
func contentHash(t *testing.T, o *unstructured.Unstructured) string {
	t.Helper()
	c := o.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "status")
	unstructured.RemoveNestedField(c.Object, "metadata", "resourceVersion")
	var kept []metav1.ManagedFieldsEntry
	for _, mf := range c.GetManagedFields() {
		if mf.Subresource != "status" {
			kept = append(kept, mf)
		}
	}
	c.SetManagedFields(kept)
	b, err := json.Marshal(c.Object)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// versionsDiff lists what differs between two objectVersions, one line each.
func versionsDiff(before, after map[string]string) []string {
	var diffs []string
	for k, v := range before {
		switch w, ok := after[k]; {
		case !ok:
			diffs = append(diffs, "deleted "+k)
		case w != v:
			diffs = append(diffs, "changed "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			diffs = append(diffs, "created "+k)
		}
	}
	sort.Strings(diffs)
	return diffs
}

// specFile writes an IstioOperator spec into the test's temporary directory.
func specFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(strings.TrimLeft(body, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// requestLog records the requests that passed through a recording proxy.
type requestLog struct {
	mu   sync.Mutex
	reqs []string
	// at is when each request arrived.
	at []time.Time
}

func (l *requestLog) add(r string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, r)
	l.at = append(l.at, time.Now())
}

// lastAt is when the last request arrived.
func (l *requestLog) lastAt() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.at) == 0 {
		return time.Time{}
	}
	return l.at[len(l.at)-1]
}

// take returns the requests so far and forgets them.
func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.reqs
	l.reqs, l.at = nil, nil
	return out
}

// writes are the requests that could change the cluster (anything but GET, HEAD, OPTIONS;
// a server-side dry run is a write request too, but tests never send one through here).
func writes(reqs []string) []string {
	var out []string
	for _, r := range reqs {
		method, _, _ := strings.Cut(r, " ")
		if method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions {
			out = append(out, r)
		}
	}
	return out
}

// installWrites are the writes of reqs other than the cluster lock's own Lease requests
// (creating, taking and releasing it; istioctl writes no other Lease): what a refused run
// must not send.
func installWrites(reqs []string) []string {
	var out []string
	for _, w := range writes(reqs) {
		if !strings.Contains(w, " /apis/coordination.k8s.io/v1/namespaces/kube-system/leases") {
			out = append(out, w)
		}
	}
	return out
}

// recordingProxy serves the cluster's API on a plain loopback address, forwarding with the
// admin credentials and recording every request as "METHOD path?query" (with " [metadata]"
// after a request for metadata only). It returns a
// kubeconfig for istioctl that goes through it: what istioctl sent is then known exactly,
// not inferred from what changed.
func recordingProxy(t *testing.T, c *cluster.Cluster) (string, *requestLog) {
	t.Helper()
	rt, err := rest.TransportFor(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(c.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	log := &requestLog{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = rt
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entry := r.Method + " " + r.URL.RequestURI()
		if strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadata") {
			entry += " [metadata]"
		}
		log.add(entry)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	kubeconfig := filepath.Join(t.TempDir(), "proxy-kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: %q}}]
users: [{name: proxy, user: {}}]
contexts: [{name: proxy, context: {cluster: proxy, user: proxy}}]
current-context: proxy
`, srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, log
}
