package action_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	helmaction "helm.sh/helm/v3/pkg/action"
	helmkube "helm.sh/helm/v3/pkg/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// extHelmConfig is a Helm client for the test cluster that records its writes as field
// manager "helm", as the helm binary does.
func extHelmConfig(t *testing.T, c *cluster.Cluster, ns string) *helmaction.Configuration {
	t.Helper()
	helmkube.ManagedFieldsManager = "helm"
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &c.Kubeconfig, &ns
	cacheDir := filepath.Join(t.TempDir(), "cache")
	flags.CacheDir = &cacheDir
	cfg := &helmaction.Configuration{}
	if err := cfg.Init(flags, ns, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// extHelmControlPlane installs base and istio-discovery from our charts with Helm's own
// library (istiod at tag), and removes them and the CRDs Helm leaves when the test ends.
func extHelmControlPlane(t *testing.T, c *cluster.Cluster, tag string) *helmaction.Configuration {
	t.Helper()
	charts, err := render.NewCharts("")
	if err != nil {
		t.Fatal(err)
	}
	r, err := render.NewRenderer("")
	if err != nil {
		t.Fatal(err)
	}
	crdNames, err := r.BaseCRDNames()
	if err != nil {
		t.Fatal(err)
	}
	cfg := extHelmConfig(t, c, "istio-system")
	for _, rel := range []struct{ name, chart string }{{"istio-base", "base"}, {"istiod", "istio-control/istio-discovery"}} {
		ch, err := charts.Load(rel.chart)
		if err != nil {
			t.Fatal(err)
		}
		inst := helmaction.NewInstall(cfg)
		inst.ReleaseName, inst.Namespace, inst.Timeout = rel.name, "istio-system", time.Minute
		if _, err := inst.Run(ch, map[string]any{"global": map[string]any{"tag": tag}}); err != nil {
			t.Fatalf("helm install %s: %v", rel.name, err)
		}
	}
	t.Cleanup(func() {
		for _, rel := range []string{"istiod", "istio-base"} {
			if _, err := helmaction.NewUninstall(cfg).Run(rel); err != nil {
				t.Errorf("helm uninstall %s: %v", rel, err)
			}
		}
		// Helm leaves the CRDs; the next tests install Base themselves.
		// One at a time, each gone before the next, as uninstall does: deleted together, one
		// can stay terminating for minutes (docs/install.md) and fail the next test's install.
		for _, n := range crdNames {
			_ = c.Dynamic.Resource(extCRDs).Delete(context.Background(), n, metav1.DeleteOptions{})
			harness.Eventually(t, 30*time.Second, "CRD "+n+" gone", func() (bool, string) {
				_, err := c.Dynamic.Resource(extCRDs).Get(context.Background(), n, metav1.GetOptions{})
				return apierrors.IsNotFound(err), ""
			})
		}
	})
	return cfg
}

// TestExternalHelmControlPlaneE2E: the same with an istiod Helm installed from our charts
// (a real helm.sh/helm/v3 action.Install of base and istio-discovery). The gateways install
// leaves the release alone; installing the whole default profile over it is refused,
// naming each object and its manager, before anything is written.
func TestExternalHelmControlPlaneE2E(t *testing.T) {
	c := cluster.Get(t)
	ctx := context.Background()
	purge(t, c)
	extCleanGateways(t, c)
	_, _ = c.Kube.CoreV1().Namespaces().Create(ctx, fixture.Namespace("istio-system"), metav1.CreateOptions{})
	// istiod one patch release of the previous minor version: the gateways must follow.
	cfg := extHelmControlPlane(t, c, "1.29.5")
	harness.Eventually(t, 30*time.Second, "istiod ready", func() (bool, string) { // istiod ready (kwok)
		d, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas >= 1, ""
	})
	before := extControlPlaneVersions(t, c)
	file := harness.SpecFile(t, "gw.yaml", harness.OperatorHeader+extGatewaysSpec)
	gw := spec.Options{Files: []string{file}, Sets: []string{"tag=1.29.0"}}
	const istiod = "Deployment/istio-system/istiod"

	// The version comes from istiod's image; proxies newer than istiod are refused.
	res := extPrecheck(t, c, spec.Options{Files: gw.Files})
	if !res.Failed || !extSays(res.Report, false, istiod, "incompatible: proxies "+version.Version+" would be newer than istiod 1.29.5") {
		t.Fatalf("precheck with proxies newer than istiod: failed %v: %+v", res.Failed, res.Report.Results)
	}
	res = extPrecheck(t, c, gw)
	if res.Failed || !extSays(res.Report, true, istiod, "revision default, version 1.29.5, ready, managed by Helm release istio-system/istiod; istiod 1.29.5 serves proxies 1.29.0") ||
		!extSays(res.Report, true, "CustomResourceDefinition/*.istio.io", "15 CRDs established, managed by field manager helm") {
		t.Errorf("precheck: failed %v: %+v", res.Failed, res.Report.Results)
	}
	if extAnySays(res.Report, "in place") {
		t.Errorf("precheck says a gateways-only install changes istiod: %+v", res.Report.Results)
	}
	extMustInstall(t, c, action.Install{}, gw)
	extGatewayReady(t, c, "istio-gateways")
	extSameVersions(t, "after the gateways install", before, extControlPlaneVersions(t, c))

	// The default profile would take Helm's objects over: refused before writing.
	_, _, err := extInstall(c, action.Install{}, spec.Options{})
	extErrorSays(t, "install over Helm", err, "exist and were not installed by istioctl",
		"Deployment/istio-system/istiod: managed by Helm release istio-system/istiod",
		"CustomResourceDefinition/gateways.networking.istio.io: managed by field manager helm",
		"Nothing was written", "adopt them with --take-ownership")
	extSameVersions(t, "after the refused install", before, extControlPlaneVersions(t, c))

	res = extVerify(t, c, gw)
	if res.Failed || extAnySays(res.Report, "the spec installs") {
		t.Errorf("verify-install compares istiod's version with a spec that does not install it: failed %v: %+v", res.Failed, res.Report.Results)
	}
	plan, rec := extUninstallGateways(t, c, file)
	extGone(t, c, "istio-gateways", "istio-ingressgateway")
	if slices.ContainsFunc(plan.Targets, func(o string) bool { return strings.Contains(o, "istio-system/istiod") }) || extMentions(rec, "istio-system/istiod") {
		t.Errorf("the gateways' uninstall touched istiod: %v", plan.Targets)
	}
	extSameVersions(t, "after the gateways' uninstall", before, extControlPlaneVersions(t, c))
	if _, err := helmaction.NewStatus(cfg).Run("istiod"); err != nil {
		t.Errorf("the Helm release is gone: %v", err)
	}
}
