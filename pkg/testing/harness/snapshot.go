package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// SnapshotKinds are what an install may write: every kind it applies or prunes, the CRDs
// and the namespaces.
var SnapshotKinds = append([]schema.GroupVersionKind{
	{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
	{Version: "v1", Kind: "Namespace"},
}, install.PruneKinds...)

// ObjectVersions maps every object of SnapshotKinds in the cluster (all namespaces, any labels)
// to a hash of what any writer but a controller's status update set (the object without its
// status, resourceVersion and status managedFields): two equal snapshots mean nothing of
// those kinds was created, changed or deleted in between. Status is left out because
// controllers keep writing it on their own (the HPA controller's conditions, minutes after
// an install), and istioctl never does; so are the EndpointSlices the endpointslice controller
// keeps (kwok's pods turn ready late). Install records (operator/history: one Secret
// written by every install, by design) are left out, and their seals. It first waits until no namespace is
// being deleted: an earlier test's namespace going away would change objects between
// snapshots.
func ObjectVersions(t testing.TB, c *cluster.Cluster) map[string]string {
	t.Helper()
	Settled(t, c)
	out := map[string]string{}
	for id, o := range Objects(t, c) {
		if o.GetLabels()["endpointslice.kubernetes.io/managed-by"] == "endpointslice-controller.k8s.io" {
			continue // the controller's own, rewritten whenever a pod's readiness moves
		}
		if IstiodsOwn(o) {
			continue // its leader elections renew every few seconds
		}
		out[id] = contentHash(t, o)
	}
	return out
}

// Objects lists every object of SnapshotKinds in the cluster (all namespaces, any labels)
// by ref's string form (Kind/namespace/name, Kind/name when cluster-scoped), but install
// records (operator/history: trimmed to the newest ones by design).
func Objects(t testing.TB, c *cluster.Cluster) map[string]*unstructured.Unstructured {
	t.Helper()
	client, err := kube.NewClientForConfig(c.Config, ownership.KubeOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, gvk := range SnapshotKinds {
		items, err := client.List(context.Background(), gvk, "")
		if err != nil {
			t.Fatalf("listing %s: %v", gvk.Kind, err)
		}
		for i := range items {
			if o := &items[i]; o.GetLabels()[history.LabelRecord] != "true" {
				out[ref.OfGVK(gvk, o.GetNamespace(), o.GetName()).String()] = o
			}
		}
	}
	return out
}

// IstiodsOwn says whether only istiod ever wrote o (its root certificates, CA Secret and
// leader elections): the bed's real istiod writes them on its own.
func IstiodsOwn(o *unstructured.Unstructured) bool {
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
func contentHash(t testing.TB, o *unstructured.Unstructured) string {
	t.Helper()
	c := o.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "status")
	unstructured.RemoveNestedField(c.Object, "metadata", "resourceVersion")
	// The seals of install records (operator/history) change with every record, by design.
	if ann := c.GetAnnotations(); ann != nil {
		for k := range ann {
			if strings.HasPrefix(k, history.SealPrefix) {
				delete(ann, k)
			}
		}
		if len(ann) == 0 {
			ann = nil // as before the first seal
		}
		c.SetAnnotations(ann)
	}
	var kept []metav1.ManagedFieldsEntry
	for _, mf := range c.GetManagedFields() {
		if mf.Subresource != "status" && !sealsOnly(mf) {
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

// sealsOnly says a managedFields entry holds nothing but seal annotations: the entry of a
// record's seal, whose time changes with every record.
func sealsOnly(mf metav1.ManagedFieldsEntry) bool {
	if mf.FieldsV1 == nil {
		return false
	}
	var fields map[string]map[string]map[string]any
	if json.Unmarshal(mf.FieldsV1.Raw, &fields) != nil || len(fields) != 1 || len(fields["f:metadata"]) != 1 {
		return false
	}
	ann := fields["f:metadata"]["f:annotations"]
	for k := range ann {
		if k != "." && !strings.HasPrefix(k, "f:"+history.SealPrefix) {
			return false
		}
	}
	return len(ann) > 0
}

// VersionsDiff lists what differs between two ObjectVersions, one line each.
func VersionsDiff(before, after map[string]string) []string {
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
