package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	helmkube "helm.sh/helm/v3/pkg/kube"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

func mustContain(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, out)
		}
	}
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// controlPlaneVersions records the resourceVersion of the control plane's objects, to show
// an install that relies on it leaves it alone.
func controlPlaneVersions(t *testing.T, c *cluster.Cluster) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	if d, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod", metav1.GetOptions{}); err == nil {
		out["Deployment/istiod"] = d.ResourceVersion
	}
	if s, err := c.Kube.CoreV1().Services("istio-system").Get(ctx, "istiod", metav1.GetOptions{}); err == nil {
		out["Service/istiod"] = s.ResourceVersion
	}
	if cm, err := c.Kube.CoreV1().ConfigMaps("istio-system").Get(ctx, "istio", metav1.GetOptions{}); err == nil {
		out["ConfigMap/istio"] = cm.ResourceVersion
	}
	if sa, err := c.Kube.CoreV1().ServiceAccounts("istio-system").Get(ctx, "istiod", metav1.GetOptions{}); err == nil {
		out["ServiceAccount/istiod"] = sa.ResourceVersion
	}
	if w, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "istio-sidecar-injector", metav1.GetOptions{}); err == nil {
		out["MutatingWebhookConfiguration/istio-sidecar-injector"] = w.ResourceVersion
	}
	if crd, err := c.Dynamic.Resource(crdGVR).Get(ctx, "gateways.networking.istio.io", metav1.GetOptions{}); err == nil {
		out["CRD/gateways.networking.istio.io"] = crd.GetResourceVersion()
	}
	if len(out) != 6 {
		t.Fatalf("the control plane is incomplete: %v", out)
	}
	// The default revision tag, when an install set it (Helm does not).
	if w, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "istio-revision-tag-default", metav1.GetOptions{}); err == nil {
		out["MutatingWebhookConfiguration/istio-revision-tag-default"] = w.ResourceVersion
	}
	return out
}

func sameVersions(t *testing.T, when string, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: %s changed (resourceVersion %s -> %q)", when, k, v, after[k])
		}
	}
}

// gatewayReady checks the gateway install left a ready gateway wired to istio-system's istiod.
func gatewayReady(t *testing.T, c *cluster.Cluster, ns string) {
	t.Helper()
	d, err := c.Kube.AppsV1().Deployments(ns).Get(context.Background(), "istio-ingressgateway", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("gateway Deployment: %v", err)
	}
	if d.Status.ReadyReplicas < 1 {
		t.Errorf("gateway not ready: %+v", d.Status)
	}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "CA_ADDR" && e.Value != "istiod.istio-system.svc:15012" {
			t.Errorf("the gateway's CA_ADDR is %q, not the existing istiod", e.Value)
		}
	}
}

func gone(t *testing.T, c *cluster.Cluster, ns, deployment string) {
	t.Helper()
	_, err := c.Kube.AppsV1().Deployments(ns).Get(context.Background(), deployment, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Deployment %s/%s still there (%v)", ns, deployment, err)
	}
}

// The gateways' spec relies on the control plane: no name of its own, so without the
// declaration its prune and uninstall would select istiod too.
const gatewaysSpec = `spec:
  profile: empty
  external:
    controlPlane: {namespace: istio-system}
  components:
    ingressGateways:
    - name: istio-ingressgateway
      namespace: istio-gateways
      enabled: true
`

func cleanGateways(t *testing.T, c *cluster.Cluster) {
	t.Cleanup(func() {
		_ = c.Kube.CoreV1().Namespaces().Delete(context.Background(), "istio-gateways", metav1.DeleteOptions{})
	})
}

// TestExternalControlPlaneE2E: gateways installed against an istiod this tool installed
// with another spec. Without the control plane: precheck names what is missing, install
// refuses and writes nothing. With it: precheck passes, the gateways become ready and point
// at it, istiod is never written to (resourceVersions), a re-install prunes nothing of it,
// and uninstalling the gateways leaves it.
func TestExternalControlPlaneE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	x := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}
	ctx := context.Background()
	x.MustOutput("uninstall", "--purge", "-y")
	x.PurgeAtEnd()
	cleanGateways(t, c)
	cp := harness.SpecFile(t, "cp.yaml", harness.OperatorHeader+"metadata: {name: control-plane}\nspec:\n  profile: minimal\n")
	gw := harness.SpecFile(t, "gw.yaml", harness.OperatorHeader+gatewaysSpec)

	out, err := x.Try("x", "precheck", "-v", "-f", gw)
	if exitCode(err) != 1 {
		t.Fatalf("precheck without a control plane: %v\n%s", err, out)
	}
	mustContain(t, "precheck without a control plane", out,
		"Deployment/istio-system/istiod: missing: no istiod of revision default in namespace istio-system (spec.external.controlPlane names it)",
		"CustomResourceDefinition/gateways.networking.istio.io: missing")
	out, err = x.Try("install", "-f", gw, "-y")
	if err == nil || !strings.Contains(out, "Nothing was written") {
		t.Fatalf("install without a control plane: %v\n%s", err, out)
	}
	if _, err := c.Kube.CoreV1().Namespaces().Get(ctx, "istio-gateways", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused install created the gateways' namespace (%v)", err)
	}

	x.MustOutput("install", "-f", cp, "-y")
	before := controlPlaneVersions(t, c)
	if before["MutatingWebhookConfiguration/istio-revision-tag-default"] == "" {
		t.Error("the control plane's install set no default revision tag")
	}

	out = x.MustOutput("x", "precheck", "-v", "-f", gw)
	v := version.Version
	mustContain(t, "precheck", out, `Deployment/istio-system/istiod: revision default, version `+v+`, ready, managed by istioctl (install spec "control-plane", revision default); istiod `+v+` serves proxies `+v,
		"CustomResourceDefinition/*.istio.io: 15 CRDs established")
	// Proxies newer than istiod: refused.
	newer := nextMinor(t, v)
	out, err = x.Try("x", "precheck", "-v", "-f", gw, "--set", "tag="+newer)
	if exitCode(err) != 1 {
		t.Fatalf("precheck with newer proxies: %v\n%s", err, out)
	}
	mustContain(t, "precheck with newer proxies", out, "incompatible: proxies "+newer+" would be newer than istiod "+v)

	out = x.MustOutput("install", "-f", gw, "-y")
	mustContain(t, "gateways install", out, "✔ Deployment/istio-system/istiod: revision default", "✔ Installation complete")
	gatewayReady(t, c, "istio-gateways")
	sameVersions(t, "after the gateways install", before, controlPlaneVersions(t, c))
	out = x.MustOutput("verify-install", "-f", gw)
	mustContain(t, "verify-install", out, "Deployment/istio-gateways/istio-ingressgateway", "Deployment/istio-system/istiod: revision default")

	// Again: nothing to change, nothing pruned (istiod is not in this spec, and left alone).
	out = x.MustOutput("install", "-f", gw, "-y")
	mustContain(t, "gateways re-install", out, "(0 applied,", ", 0 pruned)")
	// The control plane's own (named) spec again: it does not prune the gateways.
	out = x.MustOutput("install", "-f", cp, "-y")
	mustContain(t, "control plane re-install", out, ", 0 pruned)")
	gatewayReady(t, c, "istio-gateways")
	sameVersions(t, "after the re-installs", before, controlPlaneVersions(t, c))

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
	sidecarPod(t, c, c.Namespace(t), "default")
	out = x.MustOutput("uninstall", "-f", gw, "-y")
	mustContain(t, "uninstall of the gateways", out, "Leaving Base, Pilot alone", "Deployment/istio-gateways/istio-ingressgateway",
		"! these gateways are removed, and the traffic they carry stops:")
	if strings.Contains(out, "sidecars of") {
		t.Errorf("the gateways' uninstall warns about sidecars of the istiod it leaves:\n%s", out)
	}
	if n := records(); recordsBefore == 0 || n != recordsBefore {
		t.Errorf("install records of revision default: %d before the gateways' uninstall, %d after", recordsBefore, n)
	}
	if strings.Contains(out, "istio-system/istiod") {
		t.Errorf("the gateways' uninstall touched istiod:\n%s", out)
	}
	gone(t, c, "istio-gateways", "istio-ingressgateway")
	sameVersions(t, "after the gateways' uninstall", before, controlPlaneVersions(t, c))
}

// helmConfig is a Helm client for the test cluster that records its writes as field
// manager "helm", as the helm binary does.
func helmConfig(t *testing.T, c *cluster.Cluster, ns string) *action.Configuration {
	t.Helper()
	helmkube.ManagedFieldsManager = "helm"
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &c.Kubeconfig, &ns
	cacheDir := filepath.Join(t.TempDir(), "cache")
	flags.CacheDir = &cacheDir
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, ns, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestExternalHelmControlPlaneE2E: the same with an istiod Helm installed from our charts
// (a real helm.sh/helm/v3 action.Install of base and istio-discovery). The gateways install
// leaves the release alone; installing the whole default profile over it is refused,
// naming each object and its manager, before anything is written.
func TestExternalHelmControlPlaneE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	x := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}
	ctx := context.Background()
	x.MustOutput("uninstall", "--purge", "-y")
	cleanGateways(t, c)
	_, _ = c.Kube.CoreV1().Namespaces().Create(ctx, fixture.Namespace("istio-system"), metav1.CreateOptions{})

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
	cfg := helmConfig(t, c, "istio-system")
	for _, rel := range []struct{ name, chart string }{{"istio-base", "base"}, {"istiod", "istio-control/istio-discovery"}} {
		ch, err := charts.Load(rel.chart)
		if err != nil {
			t.Fatal(err)
		}
		inst := action.NewInstall(cfg)
		inst.ReleaseName, inst.Namespace, inst.Timeout = rel.name, "istio-system", time.Minute
		// istiod one patch release of the previous minor version: the gateways must follow.
		if _, err := inst.Run(ch, map[string]any{"global": map[string]any{"tag": "1.29.5"}}); err != nil {
			t.Fatalf("helm install %s: %v", rel.name, err)
		}
	}
	t.Cleanup(func() {
		for _, rel := range []string{"istiod", "istio-base"} {
			if _, err := action.NewUninstall(cfg).Run(rel); err != nil {
				t.Errorf("helm uninstall %s: %v", rel, err)
			}
		}
		// Helm leaves the CRDs; the next tests install Base themselves.
		// One at a time, each gone before the next, as uninstall does: deleted together, one
		// can stay terminating for minutes (docs/install.md) and fail the next test's install.
		for _, n := range crdNames {
			_ = c.Dynamic.Resource(crdGVR).Delete(context.Background(), n, metav1.DeleteOptions{})
			harness.Eventually(t, 30*time.Second, "CRD "+n+" gone", func() (bool, string) {
				_, err := c.Dynamic.Resource(crdGVR).Get(context.Background(), n, metav1.GetOptions{})
				return apierrors.IsNotFound(err), ""
			})
		}
	})
	harness.Eventually(t, 30*time.Second, "istiod ready", func() (bool, string) { // istiod ready (kwok)
		d, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas >= 1, ""
	})
	before := controlPlaneVersions(t, c)
	gw := harness.SpecFile(t, "gw.yaml", harness.OperatorHeader+gatewaysSpec)

	// The version comes from istiod's image; proxies newer than istiod are refused.
	out, err := x.Try("x", "precheck", "-v", "-f", gw)
	if exitCode(err) != 1 {
		t.Fatalf("precheck with proxies newer than istiod: %v\n%s", err, out)
	}
	mustContain(t, "precheck with newer proxies", out, "✘ Deployment/istio-system/istiod: incompatible: proxies "+version.Version+" would be newer than istiod 1.29.5")
	out = x.MustOutput("x", "precheck", "-v", "-f", gw, "--set", "tag=1.29.0")
	mustContain(t, "precheck", out, "Deployment/istio-system/istiod: revision default, version 1.29.5, ready, managed by Helm release istio-system/istiod; istiod 1.29.5 serves proxies 1.29.0",
		"15 CRDs established, managed by field manager helm")
	if strings.Contains(out, "in place") {
		t.Errorf("precheck says a gateways-only install changes istiod:\n%s", out)
	}
	out = x.MustOutput("install", "-f", gw, "-y", "--set", "tag=1.29.0")
	mustContain(t, "gateways install", out, "✔ Installation complete")
	gatewayReady(t, c, "istio-gateways")
	sameVersions(t, "after the gateways install", before, controlPlaneVersions(t, c))

	// The default profile would take Helm's objects over: refused before writing.
	out, err = x.Try("install", "-y")
	if err == nil {
		t.Fatalf("installing over a Helm release succeeded:\n%s", out)
	}
	mustContain(t, "install over Helm", out, "exist and were not installed by istioctl",
		"Deployment/istio-system/istiod (managed by Helm release istio-system/istiod)",
		"CustomResourceDefinition/gateways.networking.istio.io (managed by field manager helm)",
		"Nothing was written", "--take-ownership")
	sameVersions(t, "after the refused install", before, controlPlaneVersions(t, c))

	out = x.MustOutput("verify-install", "-f", gw, "--set", "tag=1.29.0")
	if strings.Contains(out, "the spec installs") {
		t.Errorf("verify-install compares istiod's version with a spec that does not install it:\n%s", out)
	}
	out = x.MustOutput("uninstall", "-f", gw, "-y")
	gone(t, c, "istio-gateways", "istio-ingressgateway")
	if strings.Contains(out, "istio-system/istiod") {
		t.Errorf("the gateways' uninstall touched istiod:\n%s", out)
	}
	sameVersions(t, "after the gateways' uninstall", before, controlPlaneVersions(t, c))
	if _, err := action.NewStatus(cfg).Run("istiod"); err != nil {
		t.Errorf("the Helm release is gone: %v", err)
	}
}

// TestExternalCACertsE2E: a plugged-in CA the test generates. Valid: the check passes.
// Expired, wrong key, missing key, another root: precheck fails naming the problem, and
// install refuses without --force (writing nothing) and goes ahead with it. No output ever
// holds a byte of the private key.
func TestExternalCACertsE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	x := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}
	ctx := context.Background()
	ns := c.Namespace(t)
	spec := harness.SpecFile(t, "ca.yaml", harness.OperatorHeader+"spec:\n  profile: minimal\n  namespace: "+ns+
		"\n  values:\n    global:\n      istioNamespace: "+ns+"\n  external:\n    ca:\n      type: cacerts\n")
	var outputs []string
	var keyLines []string

	out, err := x.Try("x", "precheck", "-v", "-f", spec)
	outputs = append(outputs, out)
	if exitCode(err) != 1 {
		t.Fatalf("precheck without the Secret: %v\n%s", err, out)
	}
	mustContain(t, "precheck without the Secret", out, "Secret/"+ns+"/cacerts: missing: spec.external.ca.type is cacerts")

	for _, tc := range []struct {
		v    pki.Variant
		want string
	}{
		{pki.Valid, ""},
		{pki.Expired, "the CA certificate in ca-cert.pem (CN=Test Intermediate CA) expired on"},
		{pki.WrongKey, "ca-key.pem does not match the certificate in ca-cert.pem"},
		{pki.MissingKey, "missing key(s) ca-key.pem"},
		{pki.OtherRoot, "the certificate in ca-cert.pem (CN=Test Intermediate CA) does not chain to root-cert.pem"},
	} {
		ca := pki.New(t, tc.v)
		keyLines = append(keyLines, ca.KeyLines()...)
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cacerts", Namespace: ns}, Data: ca.SecretData()}
		_ = c.Kube.CoreV1().Secrets(ns).Delete(ctx, "cacerts", metav1.DeleteOptions{})
		if _, err := c.Kube.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		text, err := x.Try("x", "precheck", "-v", "-f", spec)
		js, _ := x.Try("x", "precheck", "-v", "-f", spec, "-o", "json")
		outputs = append(outputs, text, js)
		var rep struct {
			Results []struct {
				Check, Object, Message string
				Passed                 bool
				Severity               string
			}
		}
		if err := json.Unmarshal([]byte(js[:strings.LastIndex(js, "}")+1]), &rep); err != nil {
			t.Fatalf("%s: precheck JSON: %v\n%s", tc.v, err, js)
		}
		var caFailures, otherFailures []string
		for _, r := range rep.Results {
			if r.Passed || r.Severity != "error" {
				continue
			}
			if r.Check == "ca-plugged-in" {
				caFailures = append(caFailures, r.Message)
			} else {
				otherFailures = append(otherFailures, r.Check+": "+r.Message)
			}
		}
		if len(otherFailures) > 0 {
			t.Errorf("%s: unrelated precheck failures: %v", tc.v, otherFailures)
		}
		if tc.want == "" {
			if err != nil || len(caFailures) > 0 {
				t.Errorf("precheck of a valid CA: %v %v\n%s", err, caFailures, text)
			}
			mustContain(t, "precheck of a valid CA", text, "✔ Secret/"+ns+"/cacerts: CA CN=Test Intermediate CA, valid until")
			continue
		}
		if exitCode(err) != 1 || len(caFailures) != 1 || !strings.Contains(caFailures[0], tc.want) {
			t.Errorf("%s: precheck exit %d, CA failures %q, want one saying %q", tc.v, exitCode(err), caFailures, tc.want)
		}
		mustContain(t, string(tc.v)+" precheck", text, "✘ Secret/"+ns+"/cacerts: "+tc.want)

		// install refuses, writing nothing; --force goes ahead (a dry run here).
		out, err := x.Try("install", "-f", spec, "-y")
		outputs = append(outputs, out)
		if err == nil || !strings.Contains(out, tc.want) || !strings.Contains(out, "Nothing was written. Fix them, or install anyway with --force") {
			t.Errorf("%s: install without --force: %v\n%s", tc.v, err, out)
		}
		if _, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, "istiod", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the refused install wrote istiod (%v)", tc.v, err)
		}
		out, err = x.Try("install", "-f", spec, "-y", "--force", "--dry-run", "-o", "json")
		outputs = append(outputs, out)
		if err != nil || !strings.Contains(out, "(ignored because of --force)") {
			t.Errorf("%s: install --force: %v\n%s", tc.v, err, out)
		}
	}
	for _, o := range outputs {
		for _, l := range keyLines {
			if strings.Contains(o, l) {
				t.Fatalf("an output holds private key material:\n%s", o)
			}
		}
	}
}

// TestExternalTakeOwnershipE2E: an object the install renders, created by hand first. The
// install stops before writing anything, naming it and its manager; --take-ownership
// adopts it.
func TestExternalTakeOwnershipE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	x := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}
	ctx := context.Background()
	ns := c.Namespace(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "istio-cni", Namespace: ns, Labels: map[string]string{"team": "mesh"}}}
	if _, err := c.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{FieldManager: "by-hand"}); err != nil {
		t.Fatal(err)
	}
	args := installArgs(c.Kubeconfig, ns, "-y")[2:]
	t.Cleanup(func() { _, _ = x.Try("-i", ns, "uninstall", "-r", "default", "-y", "--set", "namespace="+ns) })
	crdBefore, _ := c.Dynamic.Resource(crdGVR).Get(ctx, "gateways.networking.istio.io", metav1.GetOptions{})

	out, err := x.Try(args...)
	if err == nil {
		t.Fatalf("install over a hand-made object succeeded:\n%s", out)
	}
	mustContain(t, "install", out, "1 object(s) this install would apply exist and were not installed by istioctl",
		"ServiceAccount/"+ns+"/istio-cni (managed by field manager by-hand)", "Nothing was written", "--take-ownership")
	if _, err := c.Kube.AppsV1().DaemonSets(ns).Get(ctx, "istio-cni-node", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused install created the CNI DaemonSet (%v)", err)
	}
	if crdBefore != nil {
		if after, _ := c.Dynamic.Resource(crdGVR).Get(ctx, "gateways.networking.istio.io", metav1.GetOptions{}); after == nil || after.GetResourceVersion() != crdBefore.GetResourceVersion() {
			t.Error("the refused install wrote Base's CRDs")
		}
	}
	cms, _ := c.Kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: "operator.istio.io/managed"})
	if len(cms.Items) > 0 {
		t.Errorf("the refused install wrote %d ConfigMap(s)", len(cms.Items))
	}

	out = x.MustOutput(append(args, "--take-ownership")...)
	mustContain(t, "install --take-ownership", out, "ServiceAccount/"+ns+"/istio-cni: adopted from field manager by-hand", "✔ Installation complete")
	got, err := c.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, "istio-cni", metav1.GetOptions{})
	if err != nil || got.Labels["operator.istio.io/managed"] != "Reconcile" || got.Labels["operator.istio.io/component"] != "Cni" {
		t.Errorf("the adopted ServiceAccount: %v %v", err, got.Labels)
	}
	// Adopted, it is ours: the next install needs no flag.
	out = x.MustOutput(args...)
	mustContain(t, "re-install", out, "✔ Installation complete (0 applied,")
}

// nextMinor is the release after v's minor (1.31.0 -> 1.32.0).
func nextMinor(t *testing.T, v string) string {
	t.Helper()
	var major, minor, patch int
	if _, err := fmt.Sscanf(v, "%d.%d.%d", &major, &minor, &patch); err != nil {
		t.Fatalf("version %q: %v", v, err)
	}
	return fmt.Sprintf("%d.%d.0", major, minor+1)
}
