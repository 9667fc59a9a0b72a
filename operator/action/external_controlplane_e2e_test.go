package action_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// TestExternalControlPlaneE2E: gateways installed against an istiod this tool installed
// with another spec. Without the control plane: precheck names what is missing, install
// refuses and writes nothing. With it: precheck passes, the gateways become ready and point
// at it, istiod is never written to (resourceVersions), a re-install prunes nothing of it,
// and uninstalling the gateways leaves it.
func TestExternalControlPlaneE2E(t *testing.T) {
	c := purged(t)
	ctx := context.Background()
	extCleanGateways(t, c)
	cp := spec.Options{Files: []string{harness.SpecFile(t, "cp.yaml", harness.OperatorHeader+"metadata: {name: control-plane}\nspec:\n  profile: minimal\n")}}
	gw := spec.Options{Files: []string{harness.SpecFile(t, "gw.yaml", harness.OperatorHeader+extGatewaysSpec)}}
	const istiod = "Deployment/istio-system/istiod"

	res := extPrecheck(t, c, gw)
	if !res.Failed || !extSays(res.Report, false, istiod, "missing: no istiod of revision default in namespace istio-system (spec.external.controlPlane names it)") ||
		!extSays(res.Report, false, "CustomResourceDefinition/gateways.networking.istio.io", "missing") {
		t.Fatalf("precheck without a control plane: failed %v: %+v", res.Failed, res.Report.Results)
	}
	_, _, err := extInstall(c, action.Install{}, gw)
	extErrorSays(t, "install without a control plane", err, "Nothing was written")
	if _, err := c.Kube.CoreV1().Namespaces().Get(ctx, "istio-gateways", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused install created the gateways' namespace (%v)", err)
	}

	extMustInstall(t, c, action.Install{}, cp)
	before := extControlPlaneVersions(t, c)
	if before["MutatingWebhookConfiguration/istio-revision-tag-default"] == "" {
		t.Error("the control plane's install set no default revision tag")
	}

	v := version.Version
	res = extPrecheck(t, c, gw)
	if res.Failed || !extSays(res.Report, true, istiod, `revision default, version `+v+`, ready, managed by istioctl (install spec "control-plane", revision default); istiod `+v+` serves proxies `+v) ||
		!extSays(res.Report, true, "CustomResourceDefinition/*.istio.io", "15 CRDs established") {
		t.Errorf("precheck: failed %v: %+v", res.Failed, res.Report.Results)
	}
	// Proxies newer than istiod: refused.
	newer := extNextMinor(t, v)
	res = extPrecheck(t, c, spec.Options{Files: gw.Files, Sets: []string{"tag=" + newer}})
	if !res.Failed || !extSays(res.Report, false, istiod, "incompatible: proxies "+newer+" would be newer than istiod "+v) {
		t.Errorf("precheck with newer proxies: failed %v: %+v", res.Failed, res.Report.Results)
	}

	_, rec := extMustInstall(t, c, action.Install{}, gw)
	if !extEvent(rec, event.Check, istiod, "revision default") || lastDone(t, rec).Result != event.RunSucceeded {
		t.Errorf("gateways install: no check of istiod, or not done:\n%s", messages(rec, event.Check))
	}
	extGatewayReady(t, c, "istio-gateways")
	extSameVersions(t, "after the gateways install", before, extControlPlaneVersions(t, c))
	res = extVerify(t, c, gw)
	if res.Failed || !slices.ContainsFunc(res.Report.Results, func(r check.Result) bool { return r.Object == "Deployment/istio-gateways/istio-ingressgateway" }) ||
		!extSays(res.Report, true, istiod, "revision default") {
		t.Errorf("verify-install: failed %v: %+v", res.Failed, res.Report.Results)
	}

	// Again: nothing to change, nothing pruned (istiod is not in this spec, and left alone).
	if r, _ := extMustInstall(t, c, action.Install{}, gw); r.Applied != 0 || r.Pruned != 0 {
		t.Errorf("gateways re-install: %d applied, %d pruned, want none", r.Applied, r.Pruned)
	}
	// The control plane's own (named) spec again: it does not prune the gateways.
	if r, _ := extMustInstall(t, c, action.Install{}, cp); r.Pruned != 0 {
		t.Errorf("control plane re-install pruned %d object(s)", r.Pruned)
	}
	extGatewayReady(t, c, "istio-gateways")
	extSameVersions(t, "after the re-installs", before, extControlPlaneVersions(t, c))

	records := func() int {
		list, err := c.Kube.CoreV1().Secrets("istio-system").List(ctx, metav1.ListOptions{LabelSelector: history.Selector("default")})
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Items)
	}
	recordsBefore := records()
	// A sidecar of revision default: the gateways' uninstall leaves its istiod, so it says
	// nothing about it (and does warn about the gateway).
	app := c.Namespace(t)
	if _, err := c.Kube.CoreV1().Pods(app).Create(ctx, fixture.SidecarPod(app, "default"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	plan, rec := extUninstallGateways(t, c, gw.Files[0])
	if strings.Join(plan.Leave, ", ") != "Base, Pilot" || !slices.Contains(plan.Targets, "Deployment/istio-gateways/istio-ingressgateway") ||
		!extEvent(rec, event.Warning, "", "these gateways are removed, and the traffic they carry stops:") {
		t.Errorf("uninstall of the gateways: leaves %v, removes %v, warns:\n%s", plan.Leave, plan.Targets, messages(rec, event.Warning))
	}
	if extEvent(rec, event.Warning, "", "sidecars of") {
		t.Errorf("the gateways' uninstall warns about sidecars of the istiod it leaves:\n%s", messages(rec, event.Warning))
	}
	if n := records(); recordsBefore == 0 || n != recordsBefore {
		t.Errorf("install records of revision default: %d before the gateways' uninstall, %d after", recordsBefore, n)
	}
	if slices.ContainsFunc(plan.Targets, func(o string) bool { return strings.Contains(o, "istio-system/istiod") }) || extMentions(rec, "istio-system/istiod") {
		t.Errorf("the gateways' uninstall touched istiod: %v", plan.Targets)
	}
	extGone(t, c, "istio-gateways", "istio-ingressgateway")
	extSameVersions(t, "after the gateways' uninstall", before, extControlPlaneVersions(t, c))
}
