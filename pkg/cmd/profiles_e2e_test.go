package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/readiness"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/pkg/printer"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

// TestInstallProfilesE2E installs the default, minimal, demo, minimal and ambient profiles
// one after another into istio-system, as upgrades of one install, and checks after each
// that every rendered object exists and is ready; a dry run first changes nothing, a
// re-install changes nothing, and each step prunes exactly what the profile before it
// rendered and it does not (default → minimal: the ingress gateway and nothing else).
func TestInstallProfilesE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Chdir("../..")
	t.Setenv("HOME", t.TempDir())
	client := harness.Client(t, c)
	ctx := context.Background()
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	t.Cleanup(func() { _, _, _ = harness.Run(t, "--kubeconfig", c.Kubeconfig, "uninstall", "-r", "default", "-y") })
	// The golden outputs start from a cluster without Istio: earlier tests may have left Base.
	istioctl("uninstall", "--purge", "-y")

	versions := func() map[string]string {
		out := map[string]string{}
		for _, gvk := range []string{"ConfigMap", "ServiceAccount", "Service", "Secret"} {
			list, err := c.Dynamic.Resource(fixture.CoreGVR(gvk)).Namespace("istio-system").List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			for _, it := range list.Items {
				if !harness.IstiodsOwn(&it) {
					out[gvk+"/"+it.GetName()] = it.GetResourceVersion()
				}
			}
		}
		return out
	}

	// A dry run of demo writes nothing (the namespace is created first so the server checks
	// every object).
	_, _ = c.Kube.CoreV1().Namespaces().Create(ctx, fixture.Namespace("istio-system"), metav1.CreateOptions{})
	// Every object of every kind an install writes keeps its resourceVersion, and the
	// apiserver counts not one write request that was not a dry run. (objectVersions waits
	// for terminating namespaces before the write count starts.)
	for _, profile := range []string{"default", "demo", "ambient"} {
		harness.Settled(t, c) // before versions(): a just-created istio-system is still being filled
		before, all, writes := versions(), harness.ObjectVersions(t, c), harness.AuditWrites(t, c)
		out := istioctl("install", "--set", "profile="+profile, "--dry-run")
		if !strings.Contains(out, "Dry run complete, nothing was written") || strings.Contains(out, "namespace does not exist") {
			t.Errorf("%s dry run output:\n%s", profile, out)
		}
		if w := harness.WritesBetween(writes, harness.AuditWrites(t, c)); len(w) > 0 {
			t.Errorf("the %s dry run sent write requests: %v", profile, w)
		}
		if after := versions(); !equalMaps(before, after) {
			t.Errorf("the %s dry run changed the cluster:\nbefore %v\nafter  %v", profile, before, after)
		}
		if diffs := harness.VersionsDiff(all, harness.ObjectVersions(t, c)); len(diffs) > 0 {
			t.Errorf("the %s dry run changed the cluster:\n  %s", profile, strings.Join(diffs, "\n  "))
		}
	}

	// Each step upgrades the one before; a step prunes exactly what the previous profile
	// rendered and this one does not (default → minimal: the ingress gateway; demo → minimal:
	// both gateways). The golden files are named by step.
	steps := []struct{ profile, golden string }{
		{"default", "default"}, {"minimal", "default-to-minimal"}, {"demo", "demo"}, {"minimal", "minimal"}, {"ambient", "ambient"},
	}
	var previous []*unstructured.Unstructured
	for _, step := range steps {
		profile := step.profile
		out := goldenEvents(t, istioctl("install", "-y", "-o", "json", "--set", "profile="+profile), "testdata/install/"+step.golden)
		if !strings.Contains(out, "✔ Installation complete") {
			t.Fatalf("%s: %s", step.golden, out)
		}
		manifest := istioctl("manifest", "generate", "--set", "profile="+profile)
		objs, err := render.ParseObjects([]byte(manifest))
		if err != nil {
			t.Fatal(err)
		}
		if pruned, want := prunedLines(out), droppedObjects(previous, objs); strings.Join(pruned, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s pruned:\n  %s\nwant exactly what the previous profile rendered and %s does not:\n  %s",
				step.golden, strings.Join(pruned, "\n  "), profile, strings.Join(want, "\n  "))
		}
		previous = objs
		rendered := func() map[string]string {
			out := map[string]string{}
			for _, o := range objs {
				live, err := client.Get(ctx, o)
				if err != nil || live == nil {
					t.Errorf("%s: %s missing (%v)", profile, ref.Of(o).String(), err)
					continue
				}
				if r, err := readiness.CheckWith(live, liveLister(ctx, client)); err != nil || r.Status != readiness.Ready {
					t.Errorf("%s: %s not ready: %s (%v)", profile, ref.Of(o).String(), r.Message, err)
				}
				out[ref.Of(o).String()] = live.GetResourceVersion()
			}
			return out
		}
		// Every rendered object is there and ready.
		before, beforeNS := rendered(), versions()
		// The same install again changes nothing and writes nothing: not an object, not an
		// install record (the resourceVersions of every rendered object and of everything in
		// istio-system stay).
		harness.Settled(t, c)
		writes := harness.AuditWrites(t, c)
		again := istioctl("install", "-y", "--set", "profile="+profile)
		// Not one write request either, counted at the apiserver (an apply that changes
		// nothing still is one).
		if w := harness.WritesBetween(writes, harness.AuditWrites(t, c)); len(w) > 0 {
			t.Errorf("%s re-install sent write requests: %v", profile, w)
		}
		if !strings.Contains(again, "(0 applied,") {
			t.Errorf("%s re-install changed something:\n%s", profile, again)
		}
		if after, afterNS := rendered(), versions(); !equalMaps(before, after) || !equalMaps(beforeNS, afterNS) {
			t.Errorf("%s re-install wrote:\nbefore %v %v\nafter  %v %v", profile, before, beforeNS, after, afterNS)
		}
		if step.golden == "default" {
			// What a dry run of demo over default shows: per object created, changed (with the
			// diff) or unchanged. The apiserver picks the new ports' nodePorts at random.
			all := harness.ObjectVersions(t, c)
			stream := nodePorts.ReplaceAllString(istioctl("install", "--dry-run", "-o", "json", "--set", "profile=demo"), "nodePort: N")
			out := goldenEvents(t, stream, "testdata/install/dry-run-default-to-demo")
			for _, want := range []string{"Deployment/istio-system/istio-egressgateway would be created", "ConfigMap/istio-system/istio would be configured",
				"+    accessLogFile: /dev/stdout", "Dry run complete, nothing was written"} {
				if !strings.Contains(out, want) {
					t.Errorf("the dry run of demo over default lacks %q:\n%s", want, out)
				}
			}
			if diffs := harness.VersionsDiff(all, harness.ObjectVersions(t, c)); len(diffs) > 0 {
				t.Errorf("the dry run of demo over default changed the cluster:\n  %s", strings.Join(diffs, "\n  "))
			}
		}
	}
}

var nodePorts = regexp.MustCompile(`nodePort: \d+`)

// goldenEvents checks a JSON event stream, normalised, against name+".json" and the text
// the same events print against name+".txt" (paths from the current directory), and
// returns that text.
func goldenEvents(t *testing.T, stream, name string) string {
	t.Helper()
	var js, text bytes.Buffer
	jsonSink, textSink := printer.NewEvents(&js, printer.JSON), printer.NewEvents(&text, printer.Text, printer.EventOptions{Objects: true})
	for _, e := range normalizeEvents(t, stream) {
		jsonSink.Emit(e)
		textSink.Emit(e)
	}
	golden.Check(t, name+".json", js.Bytes())
	golden.Check(t, name+".txt", text.Bytes())
	return text.String()
}

// normalizeEvents reads a JSON event stream and makes it the same run after run: times
// zeroed, waiting and ready events (they depend on how fast kwok reports pods) dropped, and
// components that ran at the same time put in dependency order (each keeps its own order).
func normalizeEvents(t *testing.T, stream string) []event.Event {
	t.Helper()
	var out []event.Event
	for _, line := range strings.Split(strings.TrimSpace(stream), "\n") {
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("not a JSON event: %q: %v", line, err)
		}
		if e.Type == event.Waiting || e.Type == event.Ready {
			continue
		}
		e.Time = time.Time{}
		out = append(out, e)
	}
	// Events without a component that come after the components (the default revision tag's)
	// stay with the prune, in their order.
	late := map[*event.Event]bool{}
	seen := false
	for i := range out {
		if out[i].Component != "" {
			seen = true
		} else if seen {
			late[&out[i]] = true
		}
	}
	items := make([]struct {
		e    event.Event
		late bool
	}, len(out))
	for i := range out {
		items[i].e, items[i].late = out[i], late[&out[i]]
	}
	rank := func(e event.Event, late bool) (int, int) {
		switch {
		case e.Type == event.Done:
			return 2, 0
		case e.Type == event.Pruned, late:
			return 1, 0
		}
		if e.Component == "" {
			return 0, -1
		}
		name, _, _ := strings.Cut(e.Component, "/")
		for i, c := range component.All {
			if string(c.Name) == name {
				return 0, i
			}
		}
		return 0, len(component.All)
	}
	sort.SliceStable(items, func(i, j int) bool {
		pi, ci := rank(items[i].e, items[i].late)
		pj, cj := rank(items[j].e, items[j].late)
		if pi != pj {
			return pi < pj
		}
		if pi != 0 {
			return false
		}
		return ci < cj || (ci == cj && items[i].e.Component < items[j].e.Component)
	})
	for i := range items {
		out[i] = items[i].e
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestCanaryE2E installs a canary revision beside the default one, verifies both, removes
// the canary and checks the default one is untouched.
func TestCanaryE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	ist := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	ist("uninstall", "--purge", "-y")
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()

	ist("install", "-y")
	goldenEvents(t, ist("install", "-y", "-o", "json", "-r", "canary", "--set", "profile=minimal"), "../../testdata/install/canary")
	for _, name := range []string{"istiod", "istiod-canary"} {
		d, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil || d.Status.ReadyReplicas < 1 {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if out := ist("verify-install"); !strings.Contains(out, "revision canary: ") || !strings.Contains(out, "revision default: ") {
		t.Errorf("verify-install should check both revisions:\n%s", out)
	}
	ist("verify-install", "-r", "canary", "--set", "profile=minimal")

	// A workload whose sidecar uses the canary: the uninstall warns that it loses its
	// control plane, naming it.
	app := c.Namespace(t)
	if _, err := c.Kube.CoreV1().Pods(app).Create(ctx, fixture.SidecarPod(app, "canary"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stream := strings.ReplaceAll(ist("uninstall", "-r", "canary", "-y", "-o", "json"), app+"/", "<app-namespace>/")
	out := goldenEvents(t, stream, "../../testdata/uninstall/canary")
	if !strings.Contains(out, "! 1 pod still has sidecars of revision \"canary\"") || !strings.Contains(out, "    <app-namespace>/app\n") {
		t.Errorf("uninstall -r canary does not warn about the pod using it:\n%s", out)
	}
	if !strings.Contains(out, "Deployment/istio-system/istiod-canary removed") || strings.Contains(out, "Deployment/istio-system/istiod removed") {
		t.Errorf("uninstall -r canary:\n%s", out)
	}
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod-canary", metav1.GetOptions{}); err == nil {
		t.Error("istiod-canary survived its uninstall")
	}
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod", metav1.GetOptions{}); err != nil {
		t.Errorf("the default revision's istiod went with the canary: %v", err)
	}
	// Removing the default revision takes its ingress gateway: a warning says so first, in a
	// dry run too, and -v lists every object before.
	out = ist("uninstall", "-r", "default", "--dry-run", "-v")
	warn := "! these gateways are removed, and the traffic they carry stops:\n    Deployment/istio-system/istio-ingressgateway\n"
	if i, j := strings.Index(out, warn), strings.Index(out, "    - Deployment/istio-system/istiod\n"); i < 0 || j < i {
		t.Errorf("uninstall -r default --dry-run -v should warn about the gateway, then list the objects:\n%s", out)
	}
	if out := ist("uninstall", "--purge", "-r", "canary", "--dry-run"); !strings.Contains(out, "! --purge removes every revision and the Istio CRDs: -r, -f and --set are ignored") {
		t.Errorf("uninstall --purge -r should say -r is ignored:\n%s", out)
	}
	// A revision that is not there (a typo, or removed already) is an error that names the
	// ones there are, unless --ignore-not-found.
	before := harness.ObjectVersions(t, c)
	_, _, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "uninstall", "-r", "canary", "-y")
	want := `nothing to remove: no object carries the labels of revision "canary" in namespace istio-system (control plane revisions there: default); check -r, -f and -i, or pass --ignore-not-found`
	if err == nil || err.Error() != want || isUsage(err) {
		t.Errorf("uninstall -r of a removed revision: %v (usage error: %v), want this data error (exit 1):\n%s", err, isUsage(err), want)
	}
	ist("uninstall", "-r", "canary", "-y", "--ignore-not-found")
	if diffs := harness.VersionsDiff(before, harness.ObjectVersions(t, c)); len(diffs) > 0 {
		t.Errorf("uninstalling a revision that is not there changed the cluster:\n  %s", strings.Join(diffs, "\n  "))
	}
}

// prunedLines returns, sorted, the objects an install's text output says it removed.
func prunedLines(out string) []string {
	var pruned []string
	for _, line := range strings.Split(out, "\n") {
		if obj, ok := strings.CutSuffix(strings.TrimSpace(line), " removed"); ok {
			pruned = append(pruned, obj)
		}
	}
	sort.Strings(pruned)
	return pruned
}

// droppedObjects returns, sorted, the objects of before that after does not have, CRDs left out: an
// install never prunes a CRD.
func droppedObjects(before, after []*unstructured.Unstructured) []string {
	kept := map[string]bool{}
	for _, o := range after {
		kept[ref.Of(o).String()] = true
	}
	var out []string
	for _, o := range before {
		if id := ref.Of(o).String(); !kept[id] && o.GetKind() != "CustomResourceDefinition" {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// liveLister answers a readiness rule's related objects from live lists.
func liveLister(ctx context.Context, client *kube.Client) readiness.Lister {
	return func(gvk schema.GroupVersionKind, namespace, selector string) ([]*unstructured.Unstructured, error) {
		items, err := client.ListIn(ctx, gvk, namespace, selector)
		out := make([]*unstructured.Unstructured, len(items))
		for i := range items {
			out[i] = &items[i]
		}
		return out, err
	}
}
