package fleetrun_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// linkRemoteInjector gives cluster-3 what the remote profile renders for cluster ID
// cluster-3 that says its name without istiod: the sidecar injector, its name in the
// injection path, and the reader ClusterRole, which may then read webhooks. The injector
// goes when the test ends.
func linkRemoteInjector(t *testing.T, l *linkRig) {
	t.Helper()
	mg := &action.ManifestGenerate{Config: &action.Config{Version: linkVersion}, Spec: spec.Options{Sets: []string{"profile=remote",
		"values.global.multiCluster.clusterName=cluster-3", "values.istiodRemote.injectionPath=/inject/cluster/cluster-3/net/network1"}}}
	ms, err := mg.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := string(ms[0].YAML.Bytes())
	c3 := l.member("cluster-3")
	ctx := context.Background()
	gvrs := map[string]schema.GroupVersionResource{
		"MutatingWebhookConfiguration": {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"},
		"ClusterRole":                  {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	}
	applied := 0
	for _, doc := range strings.Split(out, "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: obj}
		gvr, ok := gvrs[u.GetKind()]
		if !ok || (u.GetKind() == "ClusterRole" && !strings.HasPrefix(u.GetName(), "istio-reader-clusterrole")) {
			continue
		}
		ri := c3.Dynamic.Resource(gvr)
		live, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = ri.Create(ctx, u, metav1.CreateOptions{})
		case err == nil:
			u.SetResourceVersion(live.GetResourceVersion())
			_, err = ri.Update(ctx, u, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		applied++
		if u.GetKind() == "MutatingWebhookConfiguration" {
			t.Cleanup(func() { _ = ri.Delete(context.Background(), u.GetName(), metav1.DeleteOptions{}) })
		}
	}
	if applied != 2 {
		t.Fatalf("the remote profile renders %d of the injector and the reader ClusterRole:\n%s", applied, out)
	}
}
