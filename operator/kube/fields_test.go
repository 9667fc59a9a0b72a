package kube_test

import (
	"context"
	"testing"
	"time"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

func TestApplyFields(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	client := harness.Client(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cm := fixture.Object(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: fields, namespace: `+ns+`}, data: {a: "1", b: "2"}}`)
	if _, err := client.Apply(ctx, cm, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	part := fixture.Object(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: fields, namespace: `+ns+`}, data: {a: "changed"}}`)

	if _, err := client.ApplyFields(ctx, part, ownership.FieldManager, false); err == nil {
		t.Error("ApplyFields as the installer's own manager would drop the fields it leaves out; want an error")
	}
	if _, err := client.ApplyFields(ctx, part, "other", true); err != nil {
		t.Fatal(err)
	}
	if live, _ := client.Get(ctx, cm); live.Object["data"].(map[string]any)["a"] != "1" {
		t.Error("a dry run wrote")
	}

	// The conflict with the installer's field is forced; the rest stays the installer's.
	live, err := client.ApplyFields(ctx, part, "other", false)
	if err != nil {
		t.Fatal(err)
	}
	if data := live.Object["data"].(map[string]any); data["a"] != "changed" || data["b"] != "2" {
		t.Errorf("data after ApplyFields: %v", data)
	}
	managers := map[string]bool{}
	for _, mf := range live.GetManagedFields() {
		managers[mf.Manager] = true
	}
	if !managers["other"] || !managers[ownership.FieldManager] {
		t.Errorf("field managers after ApplyFields: %v", managers)
	}
	if _, ok := live.GetAnnotations()[kube.HashAnnotation]; !ok {
		t.Error("ApplyFields removed the installer's applied-hash annotation")
	}
}
