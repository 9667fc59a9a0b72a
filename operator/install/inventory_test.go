package install_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestInventoryCallersAgree: prune, uninstall and verify-install find what an install owns
// through one inventory, so on a cluster holding this install's objects, another
// revision's, Helm's copies of our labels, a controller's copy and unlabelled objects they
// name exactly this install's objects.
func TestInventoryCallersAgree(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	ctx := context.Background()
	client := harness.Client(t, c)
	owner := ownership.Owner{Namespace: ns, Version: "1.30.0"}
	canary := ownership.Owner{Namespace: ns, Revision: "canary", Version: "1.30.0"}
	cm := func(name string, labels map[string]string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetAPIVersion("v1")
		o.SetKind("ConfigMap")
		o.SetNamespace(ns)
		o.SetName(name)
		o.SetLabels(labels)
		return o
	}
	apply := func(o *unstructured.Unstructured) {
		if _, err := client.Apply(ctx, o, kube.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create := func(o *unstructured.Unstructured, manager string, annotations map[string]string) {
		o.SetAnnotations(annotations)
		ri, _, err := client.Resource(o.GroupVersionKind(), ns)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ri.Create(ctx, o, metav1.CreateOptions{FieldManager: manager}); err != nil {
			t.Fatal(err)
		}
	}
	// Ours: applied by istioctl with our labels.
	var ours []string
	for _, name := range []string{"ours-a", "ours-b"} {
		apply(cm(name, owner.Labels(component.Pilot)))
		ours = append(ours, ref.New("ConfigMap", ns, name).String())
	}
	apply(cm("ours-gateway", owner.Labels(component.IngressGateways)))
	ours = append(ours, "ConfigMap/"+ns+"/ours-gateway")
	// Another revision's.
	apply(cm("canary", canary.Labels(component.Pilot)))
	// Helm's copy of our labels, and a hand-made one.
	create(cm("helm", owner.Labels(component.Pilot)), "helm", map[string]string{"meta.helm.sh/release-name": "istiod", "meta.helm.sh/release-namespace": ns})
	create(cm("by-hand", owner.Labels(component.Pilot)), "kubectl-create", nil)
	// A controller's copy: our labels, an owner reference.
	owned := cm("owned", owner.Labels(component.Pilot))
	parent, err := c.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "ours-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "ours-a", UID: parent.UID}})
	apply(owned)
	// Unlabelled.
	create(cm("plain", nil), "kubectl-create", nil)

	in := (&install.Installer{Client: client, Owner: owner}).Start()
	stale, err := in.Stale(ctx, nil) // a render of nothing: prune would take everything the install owns
	if err != nil {
		t.Fatal(err)
	}
	targets, err := in.Targets(ctx, install.UninstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	installed, err := in.Installed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(sorted(ours), "\n")
	for caller, got := range map[string][]*unstructured.Unstructured{"prune": stale, "uninstall": targets, "verify-install": installed} {
		if g := strings.Join(inNamespace(got, ns), "\n"); g != want {
			t.Errorf("%s finds\n%s\nwant\n%s", caller, g, want)
		}
	}
}

func inNamespace(objs []*unstructured.Unstructured, ns string) []string {
	var out []string
	for _, o := range objs {
		if o.GetNamespace() == ns {
			out = append(out, ref.Of(o).String())
		}
	}
	return sorted(out)
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
