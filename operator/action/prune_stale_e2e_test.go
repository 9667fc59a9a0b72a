package action_test

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// TestPruneOnlyStaleE2E is the prune property on a real cluster: after an install of Base
// and CNI, decoys of every kind the property test generates are created by hand (another
// revision's, another owner namespace's, another named install's, a lookalike component,
// unlabelled, Helm's, a CRD with our labels, a controller's copy, opted out, never applied
// by us); then CNI is turned off. Exactly CNI's objects are pruned, and every decoy and
// every other object keeps its resourceVersion.
func TestPruneOnlyStaleE2E(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	ctx := context.Background()
	t.Cleanup(func() { purge(t, c) })

	const name = "prune-e2e"
	withCNI := func(cni bool) spec.Options { return spec.Options{Files: []string{cniSpec(t, name, ns, cni)}} }
	extMustInstall(t, c, action.Install{}, withCNI(true))
	client := harness.Client(t, c)

	// What the second install must prune: CNI's objects, listed by their labels before any
	// decoy carries them; by ref's string form, as the snapshot and events name them.
	var stale []string
	for _, gvk := range install.PruneKinds {
		items, err := client.List(ctx, gvk, ownership.LabelComponent+"=Cni,"+ownership.LabelOwner+"="+name)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range items {
			stale = append(stale, ref.Of(&o).String())
		}
	}
	sort.Strings(stale)
	if len(stale) < 4 || !slices.Contains(stale, "DaemonSet/"+ns+"/istio-cni-node") {
		t.Fatalf("CNI's objects: %v", stale)
	}

	owner := ownership.Owner{Name: name, Namespace: ns, Version: version.Version}
	ours := func() map[string]string { return owner.Labels(component.Cni) }
	with := func(l map[string]string, kv ...string) map[string]string {
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "-" {
				delete(l, kv[i])
			} else {
				l[kv[i]] = kv[i+1]
			}
		}
		return l
	}
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	// decoy creates an object by server-side apply as manager (istio-operator: as if we had
	// applied it) or, with create, by a plain create (an Update in managedFields).
	type decoy struct {
		gvk     schema.GroupVersionKind
		ns      string
		name    string
		labels  map[string]string
		manager string
		create  bool
		extra   func(*unstructured.Unstructured)
	}
	decoys := []decoy{
		{gvk: cm, ns: ns, name: "unlabelled", manager: "kubectl-create", create: true},
		{gvk: cm, ns: ns, name: "other-revision", labels: with(ours(), ownership.LabelRevision, "canary"), manager: ownership.FieldManager},
		{gvk: cm, ns: ns, name: "other-owner-namespace", labels: with(ours(), ownership.LabelOwnerNamespace, "elsewhere"), manager: ownership.FieldManager},
		{gvk: cm, ns: ns, name: "other-owner-name", labels: with(ours(), ownership.LabelOwner, "someone-else"), manager: ownership.FieldManager},
		{gvk: schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, name: "lookalike-" + ns,
			labels: with(ours(), ownership.LabelComponent, "Kiali"), manager: ownership.FieldManager},
		{gvk: schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}, ns: ns, name: "helm-owned", manager: "helm", create: true,
			// Istio's own Helm charts set the component and revision labels too.
			labels: with(ours(), "app.kubernetes.io/managed-by", "Helm", ownership.LabelManaged, "-"),
			extra: func(o *unstructured.Unstructured) {
				o.SetAnnotations(map[string]string{"meta.helm.sh/release-name": "istio-cni", "meta.helm.sh/release-namespace": ns})
			}},
		{gvk: schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}, ns: ns, name: "helm-with-all-our-labels", manager: "helm", create: true,
			labels: with(ours(), "app.kubernetes.io/managed-by", "Helm")},
		{gvk: schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
			name: "decoys." + ns + ".example.com", labels: ours(), manager: ownership.FieldManager,
			extra: func(o *unstructured.Unstructured) {
				o.Object["spec"] = map[string]any{"group": ns + ".example.com", "scope": "Namespaced",
					"names": map[string]any{"plural": "decoys", "kind": "Decoy"},
					"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
						"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}}}}
			}},
		{gvk: cm, ns: ns, name: "controller-copy", labels: ours(), manager: ownership.FieldManager,
			extra: func(o *unstructured.Unstructured) {
				live, err := c.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "unlabelled", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: live.Name, UID: live.UID}})
			}},
		{gvk: cm, ns: ns, name: "opted-out", labels: with(ours(), ownership.LabelNotPruned, "true"), manager: ownership.FieldManager},
		{gvk: cm, ns: ns, name: "never-applied", labels: ours(), manager: "kubectl-create", create: true},
	}
	var decoyIDs []string
	for _, d := range decoys {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(d.gvk)
		o.SetNamespace(d.ns)
		o.SetName(d.name)
		o.SetLabels(d.labels)
		if d.extra != nil {
			d.extra(o)
		}
		ri, _, err := client.Resource(d.gvk, d.ns)
		if err != nil {
			t.Fatal(err)
		}
		if d.create {
			_, err = ri.Create(ctx, o, metav1.CreateOptions{FieldManager: d.manager})
		} else {
			data, _ := json.Marshal(o.Object)
			_, err = ri.Patch(ctx, d.name, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: d.manager})
		}
		if err != nil {
			t.Fatalf("decoy %s: %v", ref.Of(o).String(), err)
		}
		if d.ns == "" {
			t.Cleanup(func() { _ = ri.Delete(context.Background(), d.name, metav1.DeleteOptions{}) })
		}
		decoyIDs = append(decoyIDs, ref.OfGVK(d.gvk, d.ns, d.name).String())
	}

	before := harness.ObjectVersions(t, c)
	for _, id := range decoyIDs {
		if _, ok := before[id]; !ok {
			t.Fatalf("decoy %s is not in the snapshot", id)
		}
	}
	res, rec := extMustInstall(t, c, action.Install{}, withCNI(false))
	after := harness.ObjectVersions(t, c)

	var removed []string
	for _, e := range rec.Of(event.Pruned) {
		removed = append(removed, e.Object)
	}
	sort.Strings(removed)
	if strings.Join(removed, "\n") != strings.Join(stale, "\n") || res.Pruned != len(stale) {
		t.Errorf("pruned (%d):\n  %s\nwant exactly CNI's objects:\n  %s", res.Pruned, strings.Join(removed, "\n  "), strings.Join(stale, "\n  "))
	}
	// The only differences: the stale objects are gone.
	var want []string
	for _, s := range stale {
		want = append(want, "deleted "+s)
	}
	if diffs := harness.VersionsDiff(before, after); strings.Join(diffs, "\n") != strings.Join(want, "\n") {
		t.Errorf("cluster changes:\n  %s\nwant only:\n  %s", strings.Join(diffs, "\n  "), strings.Join(want, "\n  "))
	}
	for _, id := range decoyIDs {
		if after[id] != before[id] {
			t.Errorf("decoy %s changed (or went)", id)
		}
	}
	if !t.Failed() {
		t.Logf("pruned exactly the %d stale objects; %d decoys and %d other objects untouched", len(stale), len(decoyIDs), len(before)-len(stale)-len(decoyIDs))
	}
}

// cniSpec is a spec file of install name in ns: Base, and CNI when cni.
func cniSpec(t *testing.T, name, ns string, cni bool) string {
	return harness.SpecFile(t, "spec.yaml", `
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: `+name+`, namespace: `+ns+`}
spec:
  profile: minimal
  namespace: `+ns+`
  components:
    pilot: {enabled: false}
    cni: {enabled: `+map[bool]string{true: "true", false: "false"}[cni]+`}
  values:
    global: {istioNamespace: `+ns+`}
`)
}
