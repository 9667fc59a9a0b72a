package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/skew"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// upgradeChecks are the checks of the upgrade (docs/upgrade.md) and the Gateway API check
// they extend.
var upgradeChecks = map[string]bool{"upgrade-hop": true, "version-skew": true, "compatibility-version": true, "default-revision": true,
	"foreign-field-managers": true, "pdb-blocks-drain": true, "native-sidecar-webhooks": true, "gateway-api-versions": true}

// precheckJSON runs x precheck -o json and returns its results.
func precheckJSON(t *testing.T, c *cluster.Cluster, args ...string) []check.Result {
	t.Helper()
	out, stderr, _ := harness.Run(t, append([]string{"--kubeconfig", c.Kubeconfig, "x", "precheck", "-o", "json"}, args...)...)
	var rep check.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("precheck -o json: %v\n%s\n%s", err, out, stderr)
	}
	return rep.Results
}

// failed returns the failed results of check id (every upgrade check with id "").
func failed(results []check.Result, id string) []check.Result {
	var out []check.Result
	for _, r := range results {
		if !r.Passed && r.Severity != check.Info && (r.Check == id || (id == "" && upgradeChecks[r.Check])) {
			out = append(out, r)
		}
	}
	return out
}

func find(t *testing.T, results []check.Result, id, object string, passed bool, says ...string) {
	t.Helper()
	for _, r := range results {
		if r.Check != id || r.Passed != passed || (object != "" && r.Object != object) {
			continue
		}
		ok := true
		for _, s := range says {
			ok = ok && strings.Contains(r.Message, s)
		}
		if ok {
			return
		}
	}
	t.Errorf("no result of %s on %q (passed %v) saying %q in:\n%s", id, object, passed, says, dump(results, id))
}

func dump(results []check.Result, id string) string {
	var b strings.Builder
	for _, r := range results {
		if r.Check == id {
			fmt.Fprintf(&b, "  %s passed=%v %s: %s\n", r.Severity, r.Passed, r.Object, r.Message)
		}
	}
	return b.String()
}

// TestUpgradePrecheckSkewE2E: from a control plane built as 1.29.4, the in-place hop to
// this build (two minors) is flagged with in-place-hop, and the behaviour changes it crosses
// come with the compatibilityVersion that renders the old value; from 1.30.0 the hop passes,
// while CNI installed ahead of the control plane and a proxy three minors behind the new
// version are flagged with their rules.
func TestUpgradePrecheckSkewE2E(t *testing.T) {
	c := cluster.Get(t)
	c.RequireRealIstiod(t)
	t.Setenv("HOME", t.TempDir())
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	istioctl("uninstall", "--purge", "-y")
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()
	if skew.Minor(version.Version) != "1.31" {
		t.Skipf("written for the 1.31 line; this build is %s", version.Version)
	}

	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.At("1.29.4").MustOutput("install", "-y", "--set", "profile=minimal")
	res := precheckJSON(t, c)
	find(t, res, "upgrade-hop", "Deployment/istio-system/istiod", false, "in-place upgrade from 1.29.4 to "+version.Version, "go through 1.30 first", "rule in-place-hop")
	changes, err := skew.Changes("1.29.4", version.Version)
	if err != nil || len(changes) == 0 {
		t.Fatalf("skew.Changes: %v, %v", changes, err)
	}
	for _, ch := range changes {
		find(t, res, "compatibility-version", "Deployment/istio-system/istiod", false, ch.String())
		// The value offered renders the old behaviour.
		out := istioctl("manifest", "generate", "--set", "compatibilityVersion="+ch.CompatibilityVersion)
		name := ch.Path[strings.LastIndex(ch.Path, ".")+1:]
		if !regexp.MustCompile(`- name: ` + name + `\n\s+value: "` + fmt.Sprint(ch.Old) + `"`).MatchString(out) {
			t.Errorf("compatibilityVersion %s does not render %s=%v", ch.CompatibilityVersion, name, ch.Old)
		}
	}

	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.At("1.30.0").MustOutput("install", "-y", "--set", "profile=minimal")
	cni := filepath.Join(t.TempDir(), "cni.yaml")
	if err := os.WriteFile(cni, []byte("apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata:\n  name: cni\nspec:\n  profile: empty\n  components:\n    cni:\n      enabled: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	istioctl("install", "-y", "-f", cni)
	plain := c.Namespace(t)
	if _, err := c.Kube.CoreV1().Pods(plain).Create(context.Background(), fixture.InjectedPod(plain, "old-proxy", "default", "1.28.0"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res = precheckJSON(t, c)
	find(t, res, "upgrade-hop", "Deployment/istio-system/istiod", true, "in-place upgrade from 1.30.0 to "+version.Version+" crosses 1 minor")
	if f := failed(res, "upgrade-hop"); len(f) > 0 {
		t.Errorf("a one-minor hop fails: %+v", f)
	}
	find(t, res, "version-skew", "", false, "CNI "+version.Version+" is ahead of the control plane 1.30.0", "rule upgrade-order")
	find(t, res, "version-skew", "Pod/"+plain+"/old-proxy", false, "proxies 1.28.0 are 3 minor versions behind istiod "+version.Version, "rule proxy-skew")
}

// noInjectedPods waits until the cluster holds no injected pod: earlier tests of the binary
// leave theirs in test namespaces being deleted, which are deleted here without grace.
func noInjectedPods(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	zero := int64(0)
	harness.Eventually(t, time.Minute, "no injected pods left by another test", func() (bool, string) {
		pods, err := c.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, p := range pods.Items {
			if p.Annotations["sidecar.istio.io/status"] == "" {
				continue
			}
			left = append(left, p.Namespace+"/"+p.Name)
			ns, err := c.Kube.CoreV1().Namespaces().Get(ctx, p.Namespace, metav1.GetOptions{})
			if err == nil && ns.Labels["istioctl.test/e2e"] == "true" && ns.DeletionTimestamp != nil {
				_ = c.Kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			}
		}
		return len(left) == 0, fmt.Sprintf("injected pods left by another test: %v", left)
	})
}

// TestUpgradePrecheckFindingsE2E: a clean cluster, and a clean install, give no finding of
// the upgrade checks; old Gateway API CRDs, a default revision that disagrees with the
// default tag, a foreign manager on an object the install applies and a PDB that blocks
// drains each give theirs.
func TestUpgradePrecheckFindingsE2E(t *testing.T) {
	c := cluster.Get(t)
	c.RequireRealIstiod(t)
	t.Setenv("HOME", t.TempDir())
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	istioctl("uninstall", "--purge", "-y")
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()
	ctx := context.Background()
	noInjectedPods(t, c)

	// Through a recording proxy: a cluster with no injected pod costs no read of pods in
	// full (their metadata says none is injected).
	proxied, reqs := harness.RecordingProxy(t, c)
	out, stderr, _ := harness.Run(t, "--kubeconfig", proxied, "x", "precheck", "-o", "json")
	var rep check.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("precheck -o json: %v\n%s\n%s", err, out, stderr)
	}
	if f := failed(rep.Results, ""); len(f) > 0 {
		t.Errorf("a clean cluster gives findings: %+v", f)
	}
	for _, r := range reqs.Take() {
		if strings.HasPrefix(r, "GET ") && regexp.MustCompile(`/pods(\?|$)`).MatchString(strings.Fields(r)[1]) && !strings.HasSuffix(r, " [metadata]") {
			t.Errorf("precheck on a cluster without injected pods read pods in full: %s", r)
		}
	}
	istioctl("install", "-y")
	if f := failed(precheckJSON(t, c), ""); len(f) > 0 {
		t.Errorf("a clean install gives findings: %+v", f)
	}

	// A revision whose values.defaultRevision names it, while the default tag stays on the
	// default revision. (Its install used to wait for ever: Base waited on the default
	// validator, which calls istiod-canary, a Service only Pilot renders.)
	istioctl("install", "-y", "--set", "profile=minimal", "--revision", "canary", "--set", "values.defaultRevision=canary")
	istioctl("tag", "set", "default", "--revision", "default", "--overwrite")

	// Another field manager on the mesh config the install applies.
	patch := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"istio","namespace":"istio-system"},"data":{"mesh":"defaultConfig:\n  discoveryAddress: elsewhere:15012\n"}}`)
	force := true
	if _, err := c.Kube.CoreV1().ConfigMaps("istio-system").Patch(ctx, "istio", types.ApplyPatchType, patch,
		metav1.PatchOptions{FieldManager: "gitops-controller", Force: &force}); err != nil {
		t.Fatal(err)
	}

	// A PDB that lets none of its Deployment's pods go.
	ns := c.Namespace(t)
	labels := map[string]string{"app": "drain"}
	two := int32(2)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "drain", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}}}
	if _, err := c.Kube.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	minAvailable := intstr.FromInt32(2)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "drain", Namespace: ns}, Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	if _, err := c.Kube.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Old Gateway API CRDs.
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	crd := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
		"metadata":{"name":"httproutes.gateway.networking.k8s.io","annotations":{"api-approved.kubernetes.io":"https://github.com/kubernetes-sigs/gateway-api/pull/2466","gateway.networking.k8s.io/bundle-version":"v1.4.1","gateway.networking.k8s.io/channel":"standard"}},
		"spec":{"group":"gateway.networking.k8s.io","scope":"Namespaced","names":{"plural":"httproutes","singular":"httproute","kind":"HTTPRoute","listKind":"HTTPRouteList"},
		"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
		{"name":"v1beta1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.GetName(), metav1.DeleteOptions{}) })

	res := precheckJSON(t, c)
	find(t, res, "gateway-api-versions", "CustomResourceDefinition/httproutes.gateway.networking.k8s.io", false, "bundle-version v1.4.1 is older than v1.5.0", "standard channel", "rule gateway-api-minimum")
	find(t, res, "foreign-field-managers", "ConfigMap/istio-system/istio", false, "field manager gitops-controller owns .data.mesh", "the install takes them over")
	find(t, res, "pdb-blocks-drain", "PodDisruptionBudget/"+ns+"/drain", false, "minAvailable 2 covers all the replicas of Deployment drain (2 replicas)")
	find(t, res, "default-revision", "ConfigMap/istio-system/values-canary", false, "values.defaultRevision is canary, but the default tag points at revision default")
}
