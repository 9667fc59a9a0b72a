package check

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/external"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/pkg/testing/rendertest"
)

func remoteEnv(t *testing.T, sets ...string) *Env {
	t.Helper()
	res, ms := rendertest.Sets(t, append([]string{"profile=remote"}, sets...)...)
	return &Env{Manifests: ms, External: external.FromSpec(res.IOP)}
}

// The injector webhooks of a remote cluster must reach the remote istiod: by the injection
// URL, or through the istiod Service that points at its address (ExternalName for a host
// name, an EndpointSlice for an IP).
func TestExternalRemoteWiring(t *testing.T) {
	for _, sets := range [][]string{
		{"external.remote.address=10.1.2.3"},
		{"external.remote.address=istiod.primary.example.com"},
		{"external.remote.address=10.1.2.3", "external.remote.injectionURL=https://istiod.primary.example.com:15017/inject/cluster/c2/net/n2"},
	} {
		env := remoteEnv(t, sets...)
		out := remoteControlPlane(context.Background(), env)
		if len(out) == 0 {
			t.Fatalf("%v: no result", sets)
		}
		for _, r := range out {
			if !r.Passed {
				t.Errorf("%v: %s: %s", sets, r.Object, r.Message)
			}
		}
	}

	// A webhook changed by hand (an overlay, unvalidatedValues) no longer reaches it.
	env := remoteEnv(t, "external.remote.address=10.1.2.3")
	for _, o := range render.All(env.Manifests) {
		if o.GetKind() != "MutatingWebhookConfiguration" {
			continue
		}
		hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		cc := hooks[0].(map[string]any)["clientConfig"].(map[string]any)
		delete(cc, "service")
		cc["url"] = "https://elsewhere.example.com/inject"
		_ = unstructured.SetNestedSlice(o.Object, hooks, "webhooks")
		break
	}
	failed := 0
	for _, r := range remoteControlPlane(context.Background(), env) {
		if !r.Passed {
			failed++
			if !strings.Contains(r.Message, "calls https://elsewhere.example.com/inject, not the istiod Service that points at 10.1.2.3") {
				t.Errorf("message: %s", r.Message)
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d failures, want 1", failed)
	}

	// Without spec.external.remote the check says nothing.
	if out := remoteControlPlane(context.Background(), remoteEnv(t)); out != nil {
		t.Errorf("without a declaration: %+v", out)
	}
}
