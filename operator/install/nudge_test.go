package install_test

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestUninstallNudgesATerminatingCRD: a CRD that stays terminating is annotated while the
// uninstall waits (its finalizer retries at once on such an update instead of after its
// back-off), and the apiserver accepts that write on a CRD being deleted. A finalizer of the
// test's keeps the CRD terminating; the wait ends when the test removes it.
func TestUninstallNudgesATerminatingCRD(t *testing.T) {
	c := cluster.Get(t)
	ctx := context.Background()
	client := harness.Client(t, c)
	owner := ownership.Owner{Namespace: "istio-system", Version: "1.30.0"}
	crd := objects(t, "", `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: nudges.test.istioctl.io
  finalizers: [test.istioctl.io/hold]
spec:
  group: test.istioctl.io
  scope: Namespaced
  names: {plural: nudges, singular: nudge, kind: Nudge}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
`)[0]
	labels := owner.Labels(component.Base)
	crd.SetLabels(labels)
	if _, err := client.Apply(ctx, crd, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	crdRes := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	release := func() {
		_, _ = c.Dynamic.Resource(crdRes).Patch(ctx, crd.GetName(), "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	}
	t.Cleanup(release)

	in := (&install.Installer{Client: client, Owner: owner}).Start()
	targets, err := in.Targets(ctx, install.UninstallOptions{Purge: true})
	if err != nil {
		t.Fatal(err)
	}
	var ours []*unstructured.Unstructured
	for _, o := range targets {
		if o.GetName() == crd.GetName() {
			ours = append(ours, o)
		}
	}
	if len(ours) != 1 {
		t.Fatalf("the test CRD is not an uninstall target: %d", len(ours))
	}
	wctx, cancel := context.WithTimeout(ctx, 6*time.Second)
	defer cancel()
	_, err = in.Uninstall(wctx, nil, ours, install.UninstallOptions{Purge: true})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the uninstall of a CRD held by a finalizer: %v, want it still waiting at the deadline", err)
	}
	live, err := c.Dynamic.Resource(crdRes).Get(ctx, crd.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if live.GetDeletionTimestamp() == nil || live.GetAnnotations()[install.NudgeAnnotation] == "" {
		t.Errorf("the terminating CRD was not nudged: deletion %v, annotations %v", live.GetDeletionTimestamp(), live.GetAnnotations())
	}
	release()
	gone, cancel2 := context.WithTimeout(ctx, 30*time.Second)
	defer cancel2()
	if _, err := in.Uninstall(gone, nil, ours, install.UninstallOptions{Purge: true}); err != nil {
		t.Errorf("once released, the CRD did not go: %v", err)
	}
}
