package action_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// The migration tests (migrate_e2e_test.go) drive the real helm CLI (bin/helm, built by
// hack/kube/build.sh from the module proxy) and kubectl; these are their helpers.

// helmRun runs the tools the migration uses (helm, kubectl, the translate scripts) with
// bin/ first on PATH, against a cluster, with Helm's own directories in a temporary one.
type helmRun struct {
	t   *testing.T
	env []string
	bin string
}

func newHelmRun(t *testing.T, kubeconfig string) *helmRun {
	helm := cluster.Bin(t, "helm")
	cluster.Bin(t, "kubectl")
	home := t.TempDir()
	env := append(os.Environ(), "PATH="+filepath.Dir(helm)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+kubeconfig, "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config",
		"HELM_DATA_HOME="+home+"/data")
	return &helmRun{t: t, env: env, bin: filepath.Dir(helm)}
}

// command runs helm and kubectl from bin/, anything else from PATH.
func (h *helmRun) command(name string, args ...string) *exec.Cmd {
	if name == "helm" || name == "kubectl" {
		name = filepath.Join(h.bin, name)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = h.env
	return cmd
}

// ok runs name with args and returns its output, failing the test on an error.
func (h *helmRun) ok(name string, args ...string) string {
	h.t.Helper()
	out, err := h.command(name, args...).CombinedOutput()
	if err != nil {
		h.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// releases are the Helm releases helm list shows, namespace/name → status.
func (h *helmRun) releases() map[string]string {
	h.t.Helper()
	var list []struct{ Name, Namespace, Status string }
	if err := json.Unmarshal([]byte(h.ok("helm", "list", "-A", "-o", "json")), &list); err != nil {
		h.t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range list {
		out[r.Namespace+"/"+r.Name] = r.Status
	}
	return out
}

// stopwatch logs how long each step of a test took, for the report of what it costs.
func stopwatch(t *testing.T) func(step string) {
	last := time.Now()
	return func(step string) {
		t.Helper()
		t.Logf("%s: %v", step, time.Since(last).Round(10*time.Millisecond))
		last = time.Now()
	}
}

// translated is one release of a translation, as its install script says.
type translated struct{ name, chart, namespace, values, script string }

var helmInstallLine = regexp.MustCompile(`helm upgrade --install (\S+) "\$\{ISTIO_CHARTS:-charts\}/(\S+)" --namespace (\S+) -f (\S+)`)

// translateTo translates sets into a new directory and reads its releases from the
// scripts the README names, in its order.
func translateTo(t *testing.T, sets ...string) (string, []translated) {
	t.Helper()
	tr, err := (&action.ManifestTranslate{Config: &action.Config{}, Spec: spec.Options{Sets: sets}}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir, err := tr.Write(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rels []translated
	for _, m := range regexp.MustCompile("`\\./(install-\\S+\\.sh)`").FindAllStringSubmatch(string(readme), -1) {
		script, err := os.ReadFile(filepath.Join(dir, m[1]))
		if err != nil {
			t.Fatal(err)
		}
		h := helmInstallLine.FindStringSubmatch(string(script))
		if h == nil {
			t.Fatalf("%s runs no helm upgrade --install:\n%s", m[1], script)
		}
		rels = append(rels, translated{name: h[1], chart: h[2], namespace: h[3], values: h[4], script: m[1]})
	}
	if len(rels) == 0 || len(rels) != len(tr.Releases) {
		t.Fatalf("the README names %d install scripts for %d releases:\n%s", len(rels), len(tr.Releases), readme)
	}
	return dir, rels
}

// generate is manifest generate's objects for sets.
func generate(t *testing.T, sets ...string) []*unstructured.Unstructured {
	t.Helper()
	ms, err := (&action.ManifestGenerate{Config: &action.Config{}, Spec: spec.Options{Sets: sets}}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	objs, err := render.ParseObjects(ms[0].YAML.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// liveIdentities reads the objects' UIDs and resourceVersions.
func liveIdentities(t *testing.T, client *kube.Client, objs []*unstructured.Unstructured) (uids, versions map[string]string) {
	t.Helper()
	uids, versions = map[string]string{}, map[string]string{}
	for _, o := range objs {
		live, err := client.Get(context.Background(), o)
		if err != nil || live == nil {
			t.Fatalf("%s: missing (%v)", ref.Of(o).String(), err)
		}
		uids[ref.Of(o).String()] = string(live.GetUID())
		versions[ref.Of(o).String()] = live.GetResourceVersion()
	}
	return uids, versions
}

// changed lists the keys whose values differ between two readings.
func changed(before, after map[string]string) []string {
	var out []string
	for k, v := range before {
		if w, ok := after[k]; !ok || w != v {
			out = append(out, k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// settledVersions waits until the objects' resourceVersions stop changing (controllers
// write the status of what was just installed) and returns them.
func settledVersions(t *testing.T, client *kube.Client, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	_, prev := liveIdentities(t, client, objs)
	for deadline := time.Now().Add(time.Minute); ; {
		time.Sleep(time.Second)
		_, now := liveIdentities(t, client, objs)
		d := changed(prev, now)
		if len(d) == 0 {
			return now
		}
		if time.Now().After(deadline) {
			t.Fatalf("the objects kept changing for a minute: %v", d)
		}
		prev = now
	}
}

// upstreamCharts is the charts directory of upstream's istio.io/istio module at the version
// hack/upstream.env pins, from the module cache (make test downloads it before the sandbox).
func upstreamCharts(t *testing.T) string {
	t.Helper()
	bench, err := os.ReadFile("../../hack/upstream.env")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^UPSTREAM_VERSION=(\S+)$`).FindSubmatch(bench)
	if m == nil {
		t.Fatal("hack/upstream.env pins no UPSTREAM_VERSION")
	}
	out, err := exec.Command("go", "mod", "download", "-json", "istio.io/istio@"+string(m[1])).Output()
	if err != nil {
		t.Fatalf("go mod download istio.io/istio@%s: %v\n%s", m[1], err, out)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download istio.io/istio@%s: %v %s", m[1], err, mod.Error)
	}
	return filepath.Join(mod.Dir, "manifests", "charts")
}

// releaseObjects are the objects a Helm release's manifest lists, namespaced ones in the
// release's namespace when the manifest names none.
func releaseObjects(t *testing.T, h *helmRun, client *kube.Client, name, namespace string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := render.ParseObjects([]byte(h.ok("helm", "get", "manifest", name, "--namespace", namespace)))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := client.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatal(err)
		}
		if m.Scope.Name() == meta.RESTScopeNameNamespace && o.GetNamespace() == "" {
			o.SetNamespace(namespace)
		}
	}
	return objs
}

// messages are the messages of a run's events of type typ, with their objects.
func messages(rec *event.Recorder, typ event.Type) string {
	var b strings.Builder
	for _, e := range rec.Of(typ) {
		b.WriteString(e.Object + " " + e.Wording() + ": " + e.Message + "\n")
		for _, d := range e.Details {
			b.WriteString("  " + d + "\n")
		}
	}
	return b.String()
}

func mustContain(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, out)
		}
	}
}

// upstreamReleases installs upstream's base and istiod charts with the helm CLI, as a new
// user would (releases istio-base and istiod in istio-system; istiodArgs go to the second
// install), on a purged cluster. At the test's end whatever release is left is uninstalled
// by Helm (upstream's CRDs carry no label a purge selects: the next install would find them
// foreign), then the cluster purged.
func upstreamReleases(t *testing.T, c *cluster.Cluster, h *helmRun, istiodArgs ...string) {
	t.Helper()
	charts := upstreamCharts(t)
	purge(t, c)
	t.Cleanup(func() {
		for r := range h.releases() {
			ns, name, _ := strings.Cut(r, "/")
			_ = h.command("helm", "uninstall", name, "--namespace", ns).Run()
		}
		dropKeptCRDs(t, c)
		purge(t, c)
	})
	h.ok("helm", "install", "istio-base", filepath.Join(charts, "base"), "--namespace", "istio-system", "--create-namespace")
	h.ok("helm", append([]string{"install", "istiod", filepath.Join(charts, "istio-control", "istio-discovery"), "--namespace", "istio-system"}, istiodArgs...)...)
}

// dropKeptCRDs deletes the CRDs helm uninstall left (upstream's base chart marks them
// helm.sh/resource-policy: keep) and waits until they are gone: a Helm release's CRD left
// behind is another tool's object to every later install.
func dropKeptCRDs(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	crds := c.Dynamic.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	kept := func() []string {
		l, err := crds.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, o := range l.Items {
			if o.GetAnnotations()["meta.helm.sh/release-name"] != "" {
				names = append(names, o.GetName())
			}
		}
		return names
	}
	for _, name := range kept() {
		if err := crds.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	harness.Eventually(t, time.Minute, "the CRDs helm uninstall kept are deleted", func() (bool, string) {
		left := kept()
		return len(left) == 0, strings.Join(left, ", ")
	})
}
