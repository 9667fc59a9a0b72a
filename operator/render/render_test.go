package render

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

func renderBase(t *testing.T, sets ...string) []*unstructured.Unstructured {
	t.Helper()
	res, err := spec.Resolve(spec.Options{Sets: sets})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRenderer("")
	if err != nil {
		t.Fatal(err)
	}
	ms, _, err := r.Render(res, component.Base)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 {
		t.Fatalf("%d manifests, want Base only", len(ms))
	}
	return ms[0].Objects
}

func TestRenderBase(t *testing.T) {
	objs := renderBase(t)
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind()+"/"+o.GetName())
	}
	if len(objs) != 16 {
		t.Fatalf("%d objects, want 15 CRDs and the reader ServiceAccount: %v", len(objs), kinds)
	}
	for _, o := range objs[:15] {
		if o.GetKind() != "CustomResourceDefinition" {
			t.Fatalf("CRDs must come first: %v", kinds)
		}
		if got := o.GetLabels()["helm.sh/chart"]; got != "base-"+version.Version {
			t.Errorf("%s: helm.sh/chart label %q", o.GetName(), got)
		}
		if _, ok := o.GetLabels()["app"]; ok {
			t.Errorf("%s keeps the generator's own labels", o.GetName())
		}
	}
	sa := objs[15]
	if sa.GetKind() != "ServiceAccount" || sa.GetName() != "istio-reader-service-account" || sa.GetNamespace() != "istio-system" {
		t.Errorf("last object %s %s/%s", sa.GetKind(), sa.GetNamespace(), sa.GetName())
	}
}

func TestRenderBaseValues(t *testing.T) {
	// The default validator appears with a default revision, pointing at that revision.
	objs := renderBase(t, "values.defaultRevision=canary", "values.global.istioNamespace=mesh")
	var vwc *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "ValidatingWebhookConfiguration" {
			vwc = o
		}
	}
	if vwc == nil || vwc.GetName() != "istiod-default-validator" {
		t.Fatalf("no istiod-default-validator")
	}
	webhooks, _, _ := unstructured.NestedSlice(vwc.Object, "webhooks")
	svc, _, _ := unstructured.NestedMap(webhooks[0].(map[string]any), "clientConfig", "service")
	if svc["name"] != "istiod-canary" || svc["namespace"] != "mesh" {
		t.Errorf("validator service = %v", svc)
	}
	// resourceScope namespace leaves cluster-wide objects out.
	for _, o := range renderBase(t, "values.defaultRevision=canary", "values.global.resourceScope=namespace") {
		if o.GetKind() == "ValidatingWebhookConfiguration" {
			t.Error("cluster-scoped validator rendered with resourceScope=namespace")
		}
	}
}

func TestRenderUnknownHelmProfile(t *testing.T) {
	res, err := spec.Resolve(spec.Options{Sets: []string{"values.profile=bogus"}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := NewRenderer("")
	_, _, err = r.Render(res, component.Base)
	if err == nil || !strings.Contains(err.Error(), `unknown profile "bogus"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestSort(t *testing.T) {
	mk := func(apiVersion, kind, ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	objs := []*unstructured.Unstructured{
		mk("v1", "Service", "istio-system", "istiod"),
		mk("rbac.authorization.k8s.io/v1", "Role", "istio-system", "istiod"),
		mk("apps/v1", "Deployment", "istio-system", "istiod"),
		mk("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "", "istio-sidecar-injector"),
		mk("v1", "ConfigMap", "istio-system", "istio"),
		mk("autoscaling/v2", "HorizontalPodAutoscaler", "istio-system", "istiod"),
		mk("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "", "istio-validator"),
		mk("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "b"),
		mk("rbac.authorization.k8s.io/v1", "ClusterRole", "", "a"),
		mk("v1", "ServiceAccount", "istio-system", "istiod"),
		mk("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "x"),
	}
	Sort(objs)
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind())
	}
	want := "CustomResourceDefinition ServiceAccount ClusterRole ClusterRoleBinding ValidatingWebhookConfiguration ConfigMap MutatingWebhookConfiguration Deployment Role HorizontalPodAutoscaler Service"
	if strings.Join(got, " ") != want {
		t.Errorf("order:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}
