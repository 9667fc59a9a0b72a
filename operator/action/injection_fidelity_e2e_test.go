package action_test

import (
	"context"
	"encoding/json"
	"fmt"
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

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestInjectionFidelityE2E: the pods the bed's real istiod injects from our charts' templates
// are upstream's, field for field. On one cluster, with the same namespaces and the same
// spec values, the default revision and a canary revision with non-default values
// (injValues) are installed from our embedded charts, every case of injCases is
// created (a server-side dry run: the webhooks run, nothing is stored); then the same with
// upstream's charts and profiles (ManifestsDir, install's --manifests, at the pinned
// istio.io/istio module's manifests/). Each pod, or the refusal, must be the same.
//
// Normalised, because the apiserver makes them anew for every request (injNormalise):
// the pod's uid and creationTimestamp, the time of its managedFields entries, the name it
// generates for a pod with generateName, and the random suffix of the ServiceAccount
// admission's token volume (kube-api-access-xxxxx). Nothing else: no CA bundle reaches a pod
// (the sidecar mounts the istio-ca-root-cert ConfigMap by name), and both installs are given
// the same hub and tag, since the two charts' defaults name other images.
func TestInjectionFidelityE2E(t *testing.T) {
	bed := cluster.GetBed(t, 3)
	c := bed.Clusters[0]
	c.RequireRealIstiod(t)
	purge(t, c)
	t.Cleanup(func() { purge(t, c) })
	nss := map[string]string{
		"on":  harness.LabelledNamespace(t, c, map[string]string{"istio-injection": "enabled"}),
		"rev": harness.LabelledNamespace(t, c, map[string]string{"istio.io/rev": "canary"}),
		"off": c.Namespace(t),
	}
	if len(injCases) < 30 {
		t.Fatalf("only %d cases", len(injCases))
	}
	start := time.Now()
	ours, ourTemplates := injAll(t, c, "", nss)
	t.Logf("our charts: %d pods in %v", len(ours), time.Since(start))
	purge(t, c)
	start = time.Now()
	theirs, theirTemplates := injAll(t, c, filepath.Dir(upstreamCharts(t)), nss)
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
	for _, tc := range injCases {
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
		t.Errorf("only %d of %d pods were injected", injected, len(injCases))
	}
	t.Logf("%d pods injected alike, %d left alike uninjected, 1 refused alike", injected, len(notInjected))
}

// injAll installs the default and canary revisions from manifests ("" for the embedded
// charts) and returns each case's pod as istiod injected it (normalised YAML), or its
// refusal, and the injection templates each revision's injector ConfigMap holds.
func injAll(t *testing.T, c *cluster.Cluster, manifests string, nss map[string]string) (map[string]string, map[string]string) {
	t.Helper()
	base := []string{"hub=docker.io/istio", "tag=1.31.0",
		"values.global.meshID=mesh1", "values.global.multiCluster.clusterName=cluster-1", "values.global.network=network1"}
	for _, rev := range []struct {
		name string
		sets []string
	}{{"", base}, {"canary", append(base[:len(base):len(base)], injValues...)}} {
		if rec, err := revInstall(c, "1.31.0", rev.name, action.Install{Spec: spec.Options{ManifestsDir: manifests}}, rev.sets...); err != nil {
			t.Fatalf("install %q from %q: %v\n%s", rev.name, manifests, err, messages(rec, event.Warning))
		}
	}
	// istiod patches its webhooks' CA bundle once it runs: wait until both revisions inject.
	for _, ns := range []string{nss["on"], nss["rev"]} {
		harness.Eventually(t, time.Minute, "istiod injects pods in "+ns, func() (bool, string) {
			out, err := injDryRun(c, ns, "probe", "spec:\n  containers:"+injAppContainer)
			return err == nil && strings.Contains(out, "sidecar.istio.io/status"), fmt.Sprint(err)
		})
	}
	out := map[string]string{}
	for _, tc := range injCases {
		pod, err := injDryRun(c, nss[tc.ns], tc.name, tc.pod)
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

// injDryRun creates the pod with a server-side dry run and returns it as the apiserver
// would have stored it, normalised.
func injDryRun(c *cluster.Cluster, ns, name, body string) (string, error) {
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
	return injNormalise(got)
}

var injTokenVolume = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}\b`)

// injNormalise drops what the apiserver makes anew for each request, and nothing else.
func injNormalise(u *unstructured.Unstructured) (string, error) {
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
	return injTokenVolume.ReplaceAllString(string(y), "kube-api-access-<generated>"), nil
}
