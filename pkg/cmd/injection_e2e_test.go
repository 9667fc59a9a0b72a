package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pmezard/go-difflib/difflib"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestInjectionFidelityE2E: the pods the bed's real istiod injects from our charts' templates
// are upstream's, field for field. On one cluster, with the same namespaces and the same
// install flags, the default revision and a canary revision with non-default values
// (injectionValues) are installed from our embedded charts, every case of injectionCases is
// created (a server-side dry run: the webhooks run, nothing is stored); then the same with
// upstream's charts and profiles (--manifests at the pinned istio.io/istio module's
// manifests/). Each pod, or the refusal, must be the same.
//
// Normalised, because the apiserver makes them anew for every request (injectionNormalise):
// the pod's uid and creationTimestamp, the time of its managedFields entries, the name it
// generates for a pod with generateName, and the random suffix of the ServiceAccount
// admission's token volume (kube-api-access-xxxxx). Nothing else: no CA bundle reaches a pod
// (the sidecar mounts the istio-ca-root-cert ConfigMap by name), and both installs are given
// the same hub and tag (--set), since the two charts' defaults name other images.
func TestInjectionFidelityE2E(t *testing.T) {
	bed := cluster.GetBed(t, 3)
	c := bed.Clusters[0]
	c.RequireRealIstiod(t)
	t.Setenv("HOME", t.TempDir())
	purge := func() {
		if _, errOut, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "uninstall", "--purge", "-y"); err != nil {
			t.Errorf("uninstall --purge: %v\n%s", err, errOut)
		}
	}
	purge()
	t.Cleanup(purge)
	nss := map[string]string{
		"on":  labelled(t, c, map[string]string{"istio-injection": "enabled"}),
		"rev": labelled(t, c, map[string]string{"istio.io/rev": "canary"}),
		"off": c.Namespace(t),
	}
	if len(injectionCases) < 30 {
		t.Fatalf("only %d cases", len(injectionCases))
	}
	start := time.Now()
	ours, ourTemplates := injectAll(t, c, "", nss)
	t.Logf("our charts: %d pods in %v", len(ours), time.Since(start))
	purge()
	start = time.Now()
	theirs, theirTemplates := injectAll(t, c, upstreamManifests(t), nss)
	t.Logf("upstream's charts: %d pods in %v", len(theirs), time.Since(start))

	// The two installs inject from different text (ours is our own), else this compares
	// nothing.
	for cm, tmpl := range ourTemplates {
		if tmpl == theirTemplates[cm] {
			t.Errorf("ConfigMap %s holds the same templates from both charts: were upstream's installed?", cm)
		}
	}
	// What each case must come to, so that it exercises what it names: every case is
	// injected (by the canary revision when it asks for it) but the opted-out ones, and a
	// bad annotation is refused.
	notInjected := []string{"inject-false", "host-network", "no-injection-label", "revision-inject-false"}
	injected := 0
	for _, tc := range injectionCases {
		o, u := ours[tc.name], theirs[tc.name]
		switch {
		case tc.name == "bad-exclude-range":
			if !strings.HasPrefix(o, "refused: ") {
				t.Errorf("a pod with a bad excludeOutboundIPRanges was not refused:\n%s", o)
			}
		case slices.Contains(notInjected, tc.name):
			if strings.Contains(o, "sidecar.istio.io/status") {
				t.Errorf("pod %s was injected", tc.name)
			}
		case !strings.Contains(o, "sidecar.istio.io/status"):
			t.Errorf("pod %s was not injected:\n%s", tc.name, o)
		default:
			injected++
			if canary := tc.ns == "rev" || tc.name == "revision-label"; canary != strings.Contains(o, "istio.io/rev: canary") {
				t.Errorf("pod %s: injected by the canary revision %v, want %v", tc.name, !canary, canary)
			}
		}
		if o == u {
			continue
		}
		diff, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(u), B: difflib.SplitLines(o), FromFile: "upstream's charts", ToFile: "our charts", Context: 3,
		})
		t.Errorf("pod %s differs:\n%s", tc.name, diff)
	}
	if injected < 30 {
		t.Errorf("only %d of %d pods were injected", injected, len(injectionCases))
	}
	t.Logf("%d pods injected alike, %d left alike uninjected, 1 refused alike", injected, len(notInjected))
}

// injectAll installs the default and canary revisions from manifests ("" for the embedded
// charts) and returns each case's pod as istiod injected it (normalised YAML), or its
// refusal, and the injection templates each revision's injector ConfigMap holds.
func injectAll(t *testing.T, c *cluster.Cluster, manifests string, nss map[string]string) (map[string]string, map[string]string) {
	t.Helper()
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	base := []string{"install", "-y", "--set", "hub=docker.io/istio", "--set", "tag=1.31.0",
		"--set", "values.global.meshID=mesh1", "--set", "values.global.multiCluster.clusterName=cluster-1", "--set", "values.global.network=network1"}
	if manifests != "" {
		base = append(base, "--manifests", manifests)
	}
	istioctl(base...)
	istioctl(append(append(base, "--revision", "canary"), injectionValues...)...)
	// istiod patches its webhooks' CA bundle once it runs: wait until both revisions inject.
	for _, ns := range []string{nss["on"], nss["rev"]} {
		harness.Eventually(t, time.Minute, "istiod injects pods in "+ns, func() (bool, string) {
			out, err := dryRunPod(c, ns, "probe", "spec:\n  containers:"+appContainer)
			return err == nil && strings.Contains(out, "sidecar.istio.io/status"), fmt.Sprint(err)
		})
	}
	out := map[string]string{}
	for _, tc := range injectionCases {
		pod, err := dryRunPod(c, nss[tc.ns], tc.name, tc.pod)
		if err != nil {
			pod = "refused: " + err.Error()
		}
		out[tc.name] = pod
	}
	templates := map[string]string{}
	for _, name := range []string{"istio-sidecar-injector", "istio-sidecar-injector-canary"} {
		cm, err := c.Kube.CoreV1().ConfigMaps("istio-system").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		templates[name] = cm.Data["config"]
	}
	return out, templates
}

// dryRunPod creates the pod with a server-side dry run and returns it as the apiserver
// would have stored it, normalised.
func dryRunPod(c *cluster.Cluster, ns, name, body string) (string, error) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(body), &u.Object); err != nil {
		return "", fmt.Errorf("case %s: %w", name, err)
	}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace(ns)
	if u.GetGenerateName() == "" {
		u.SetName(name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := c.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace(ns).Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return "", err
	}
	return injectionNormalise(got)
}

var tokenVolume = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}\b`)

// injectionNormalise drops what the apiserver makes anew for each request, and nothing else.
func injectionNormalise(u *unstructured.Unstructured) (string, error) {
	u.SetUID("")
	u.SetCreationTimestamp(metav1.Time{})
	if u.GetGenerateName() != "" {
		u.SetName(u.GetGenerateName() + "<generated>")
	}
	mf := u.GetManagedFields()
	for i := range mf {
		mf[i].Time = nil
	}
	u.SetManagedFields(mf)
	b, err := json.Marshal(u.Object)
	if err != nil {
		return "", err
	}
	y, err := yaml.JSONToYAML(b)
	if err != nil {
		return "", err
	}
	return tokenVolume.ReplaceAllString(string(y), "kube-api-access-<generated>"), nil
}

// upstreamManifests is the manifests/ directory (charts and profiles) of the istio.io/istio
// module hack/upstream.env pins, from the module cache (make test downloads it before its
// sandbox).
func upstreamManifests(t *testing.T) string {
	t.Helper()
	env, err := os.ReadFile("../../hack/upstream.env")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^UPSTREAM_VERSION=(\S+)$`).FindSubmatch(env)
	if m == nil {
		t.Fatal("hack/upstream.env pins no UPSTREAM_VERSION")
	}
	version := string(m[1])
	out, err := exec.Command("go", "mod", "download", "-json", "istio.io/istio@"+version).Output()
	if err != nil {
		t.Fatalf("go mod download istio.io/istio@%s: %v\n%s", version, err, out)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download istio.io/istio@%s: %v %s", version, err, mod.Error)
	}
	return filepath.Join(mod.Dir, "manifests")
}
