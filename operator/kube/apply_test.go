package kube_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

func TestMain(m *testing.M) { cluster.Main(m) }

func TestApply(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	client := harness.Client(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cm := fixture.Object(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: mesh, namespace: `+ns+`, labels: {operator.istio.io/component: Pilot}}, data: {a: "1"}}`)

	// A dry run writes nothing.
	res, err := client.Apply(ctx, cm, kube.ApplyOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created {
		t.Error("dry run: want Created")
	}
	if live, _ := client.Get(ctx, cm); live != nil {
		t.Fatal("dry run created the object")
	}

	res, err = client.Apply(ctx, cm, kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || !res.Changed || len(res.TakenOver) != 0 {
		t.Errorf("first apply: %+v", res)
	}
	managers := res.Live.GetManagedFields()
	if len(managers) != 1 || managers[0].Manager != ownership.FieldManager {
		t.Errorf("managed fields: %+v", managers)
	}

	// The same apply again changes nothing.
	res, err = client.Apply(ctx, cm, kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Created || res.Changed || !res.Skipped {
		t.Errorf("re-apply: want skipped, got %+v", res)
	}

	// Someone else takes a field (as kubectl edit would); we take it back and say so.
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	force := true
	_, err = c.Dynamic.Resource(gvr).Namespace(ns).Patch(ctx, "mesh", types.ApplyPatchType,
		[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"mesh"},"data":{"a":"2"}}`),
		metav1.PatchOptions{FieldManager: "kubectl-edit", Force: &force})
	if err != nil {
		t.Fatal(err)
	}
	res, err = client.Apply(ctx, cm, kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || len(res.TakenOver) == 0 || !strings.Contains(strings.Join(res.TakenOver, " "), "kubectl-edit") {
		t.Errorf("takeover: %+v", res)
	}
	if v, _, _ := unstructured.NestedString(res.Live.Object, "data", "a"); v != "1" {
		t.Errorf("data.a = %q after taking it back", v)
	}

	// List by label, then delete.
	items, err := client.List(ctx, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "operator.istio.io/component=Pilot")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, it := range items {
		found = found || (it.GetNamespace() == ns && it.GetName() == "mesh")
	}
	if !found {
		t.Error("List did not find the ConfigMap")
	}
	if err := client.Delete(ctx, cm, false); err != nil {
		t.Fatal(err)
	}
	if err := client.Delete(ctx, cm, false); err != nil {
		t.Errorf("deleting a missing object: %v", err)
	}

	// A webhook configuration whose rules the server defaults (scope: "*" inside an atomic
	// list) is still as we applied it: the second apply sends nothing.
	vwc := fixture.Object(t, `{apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingWebhookConfiguration,
  metadata: {name: `+ns+`-validator, labels: {operator.istio.io/component: Pilot}},
  webhooks: [{name: rev.validation.istio.io, admissionReviewVersions: [v1], sideEffects: None, failurePolicy: Ignore,
    clientConfig: {service: {name: istiod, namespace: `+ns+`, path: /validate}},
    rules: [{operations: [CREATE, UPDATE], apiGroups: [security.istio.io], apiVersions: ["*"], resources: ["*"]}]}]}`)
	t.Cleanup(func() { _ = client.Delete(context.Background(), vwc, false) })
	if _, err := client.Apply(ctx, vwc, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err = client.Apply(ctx, vwc, kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed || !res.Skipped {
		t.Errorf("re-apply of a webhook configuration: want skipped, got %+v", res)
	}

	// A kind the cluster does not serve is a clear error.
	bogus := fixture.Object(t, `{apiVersion: example.com/v1, kind: Nope, metadata: {name: x, namespace: `+ns+`}}`)
	if _, err := client.Apply(ctx, bogus, kube.ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "does not serve example.com/v1, Kind=Nope") {
		t.Errorf("unknown kind: %v", err)
	}
}
