package tag

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestValidate(t *testing.T) {
	for _, ok := range []string{"prod", "default", "1-30-0", strings.Repeat("a", 43)} {
		if err := Validate(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Prod", "a_b", "-a", strings.Repeat("a", 44)} {
		if err := Validate(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

var canaryInjector = &canonical{
	name:        "istio-sidecar-injector-canary",
	labels:      map[string]string{"istio.io/rev": "canary", "operator.istio.io/component": "Pilot", "install.operator.istio.io/owning-resource-namespace": "istio-system"},
	annotations: map[string]string{"note": "kept"},
	caBundle:    "Q0E=", path: "/inject/custom", service: "istiod-canary", serviceNS: "istio-system", reinvocation: "IfNeeded",
}

func webhooks(t *testing.T, o *unstructured.Unstructured) []map[string]any {
	t.Helper()
	hooks, _, err := unstructured.NestedSlice(o.Object, "webhooks")
	if err != nil || len(hooks) == 0 {
		t.Fatalf("%s has no webhooks (%v)", o.GetName(), err)
	}
	var out []map[string]any
	for _, h := range hooks {
		out = append(out, h.(map[string]any))
	}
	return out
}

func TestRenderUserTag(t *testing.T) {
	objs, err := renderTag(Options{Tag: "prod", IstioNamespace: "istio-system", UserManaged: true}, "canary", canaryInjector)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("want the webhook and the Service, got %d objects", len(objs))
	}
	mwc, svc := objs[0], objs[1]
	if mwc.GetName() != "istio-revision-tag-prod" || svc.GetName() != "istiod-revision-tag-prod" || svc.GetNamespace() != "istio-system" {
		t.Fatalf("names: %s, %s/%s", mwc.GetName(), svc.GetNamespace(), svc.GetName())
	}
	for _, o := range objs {
		l := o.GetLabels()
		if l[LabelTag] != "prod" || l[LabelRev] != "canary" {
			t.Errorf("%s labels: %v", o.GetName(), l)
		}
		for k := range l {
			if strings.Contains(k, "operator.istio.io") {
				t.Errorf("%s keeps the installer label %s: prune or uninstall would match it", o.GetName(), k)
			}
		}
	}
	if mwc.GetAnnotations()["note"] != "kept" {
		t.Errorf("the injector's annotations are not carried over: %v", mwc.GetAnnotations())
	}
	var names []string
	for _, h := range webhooks(t, mwc) {
		names = append(names, h["name"].(string))
		cc := h["clientConfig"].(map[string]any)
		svcRef := cc["service"].(map[string]any)
		if svcRef["name"] != "istiod-canary" || svcRef["path"] != "/inject/custom" || cc["caBundle"] != "Q0E=" || h["reinvocationPolicy"] != "IfNeeded" {
			t.Errorf("webhook %s does not call the canary injector as installed: %v", h["name"], h)
		}
	}
	// Only the default tag takes istio-injection=enabled namespaces and unlabelled pods.
	if got := strings.Join(names, ","); got != "rev.namespace.sidecar-injector.istio.io,rev.object.sidecar-injector.istio.io" {
		t.Errorf("webhooks of a non-default tag: %s", got)
	}
	if sel, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector"); sel["istio.io/rev"] != "canary" {
		t.Errorf("the tag Service selects %v, want the canary istiod", sel)
	}
}

func TestRenderDefaultTagForInstall(t *testing.T) {
	install := map[string]string{"operator.istio.io/managed": "Reconcile", "install.operator.istio.io/owning-resource-not-pruned": "true", "istio.io/rev": "canary"}
	objs, err := renderTag(Options{Tag: Default, IstioNamespace: "istio-system", WebhookName: "my-default", Labels: install, AutoInjectNamespaces: true}, "canary", canaryInjector)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 3 {
		t.Fatalf("want the webhooks and the Service, got %d objects", len(objs))
	}
	mwc, vwc := objs[0], objs[1]
	if mwc.GetName() != "my-default" || vwc.GetName() != DefaultValidator || vwc.GetKind() != "ValidatingWebhookConfiguration" {
		t.Fatalf("names: %s, %s %s", mwc.GetName(), vwc.GetKind(), vwc.GetName())
	}
	for _, o := range objs {
		l := o.GetLabels()
		if l["operator.istio.io/managed"] != "Reconcile" || l["install.operator.istio.io/owning-resource-not-pruned"] != "true" || l[LabelTag] != Default {
			t.Errorf("%s lacks the install's labels: %v", o.GetName(), l)
		}
	}
	var names []string
	for _, h := range webhooks(t, mwc) {
		names = append(names, h["name"].(string))
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "namespace.sidecar-injector.istio.io") || !strings.Contains(got, "auto.sidecar-injector.istio.io") {
		t.Errorf("the default tag should take the default namespaces (and, auto-injecting, every namespace): %s", got)
	}
	for _, h := range webhooks(t, vwc) {
		svcRef, _, _ := unstructured.NestedStringMap(h, "clientConfig", "service")
		// The rendered policy: once istiod switched the live one, the apply leaves it be.
		if h["failurePolicy"] != "Ignore" || svcRef["name"] != "istiod-canary" || svcRef["path"] != "/validate" {
			t.Errorf("validation webhook %v: want the rendered failure policy Ignore and the canary istiod", h)
		}
	}
}

func TestRenderRemoteInjector(t *testing.T) {
	remote := &canonical{name: "istio-sidecar-injector", labels: map[string]string{}, annotations: map[string]string{},
		url: "https://istiod.example.com:15017/inject/cluster/c1/net/n1"}
	objs, err := renderTag(Options{Tag: Default, IstioNamespace: "istio-system", UserManaged: true}, Default, remote)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range webhooks(t, objs[0]) {
		if u, _, _ := unstructured.NestedString(h, "clientConfig", "url"); u != remote.url {
			t.Errorf("injection webhook %s calls %q, want %q", h["name"], u, remote.url)
		}
	}
	for _, h := range webhooks(t, objs[1]) {
		if u, _, _ := unstructured.NestedString(h, "clientConfig", "url"); u != "https://istiod.example.com:15017/validate" {
			t.Errorf("validation webhook calls %q", u)
		}
	}
}

func TestDeactivate(t *testing.T) {
	w := &unstructured.Unstructured{Object: map[string]any{"webhooks": []any{
		map[string]any{"name": "a", "namespaceSelector": map[string]any{"matchLabels": map[string]any{"istio-injection": "enabled"}}, "rules": []any{"x"}},
		map[string]any{"name": "b"},
	}}}
	w.SetName("istio-sidecar-injector")
	if Deactivated(w) {
		t.Fatal("active injector reported deactivated")
	}
	p := deactivation(w)
	if p.GetName() != w.GetName() || p.GetKind() != "MutatingWebhookConfiguration" {
		t.Fatalf("partial object names %s %s", p.GetKind(), p.GetName())
	}
	for _, h := range webhooks(t, p) {
		if len(h) != 3 {
			t.Errorf("the partial object sets more than the selectors: %v", h)
		}
	}
	if !Deactivated(p) {
		t.Error("the partial object does not deactivate")
	}
	Deactivate(w)
	if !Deactivated(w) {
		t.Error("Deactivate did not")
	}
	if h := webhooks(t, w)[0]; h["rules"] == nil {
		t.Error("Deactivate dropped other fields")
	}
	if Deactivated(&unstructured.Unstructured{Object: map[string]any{}}) {
		t.Error("a configuration without webhooks is not a deactivated injector")
	}
}
