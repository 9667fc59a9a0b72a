package cmd_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/objdiff"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// The migration tests drive the real helm CLI (bin/helm, built by hack/helm/build.sh from
// the module proxy) and kubectl against the local cluster; docs/migrate.md describes
// what they prove.

// translateExceptions are the objects istioctl and Helm may render differently from the
// translated values (docs/migrate.md): the istiod values ConfigMap records the values it
// was rendered with, and the translated ones add global.releaseLabel. istioctl's ownership
// labels and annotations differ on the live objects only: both renders carry the same.
var translateExceptions = map[string]bool{"ConfigMap/istio-system/values": true}

// helmRun runs the tools the migration uses (helm, kubectl, the translate scripts) with
// bin/ first on PATH, against c, with Helm's own directories in a temporary one.
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

// ok runs name with args and returns its output, failing the test on an error.
func (h *helmRun) ok(name string, args ...string) string {
	h.t.Helper()
	cmd := h.command(name, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
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

// releases are the Helm releases helm list shows, name → status.
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

// translated is one release of a translate output, as its install script says.
type translated struct{ name, chart, namespace, values, script string }

var helmInstallLine = regexp.MustCompile(`helm upgrade --install (\S+) "\$\{ISTIO_CHARTS:-charts\}/(\S+)" --namespace (\S+) -f (\S+)`)

// translateTo runs manifest translate into a new directory and reads its releases, in the
// README's order.
func translateTo(t *testing.T, args ...string) (string, []translated) {
	t.Helper()
	dir := t.TempDir()
	out, stderr, err := run(t, append([]string{"manifest", "translate", "-o", dir}, args...)...)
	if err != nil || !strings.Contains(out, "Output written to "+dir+"!") {
		t.Fatalf("manifest translate %v: %v\n%s%s", args, err, out, stderr)
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
	if len(rels) == 0 {
		t.Fatalf("the README names no install script:\n%s", readme)
	}
	return dir, rels
}

// byIdentity indexes objects by group, kind, namespace and name, each as plain JSON.
func byIdentity(t *testing.T, what string, objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		b, err := json.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		n := &unstructured.Unstructured{}
		if err := n.UnmarshalJSON(b); err != nil {
			t.Fatal(err)
		}
		k := o.GroupVersionKind().Group + " " + kube.Describe(o)
		if _, dup := out[k]; dup {
			t.Errorf("%s renders %s twice", what, kube.Describe(o))
		}
		out[k] = n
	}
	return out
}

// TestTranslateHelmTemplate: for every profile, helm template of our charts with the
// values manifest translate writes (each release as its install script names it) gives
// the objects manifest generate gives, but for translateExceptions.
func TestTranslateHelmTemplate(t *testing.T) {
	profiles, err := filepath.Glob("../../profiles/*.yaml")
	if err != nil || len(profiles) < 5 {
		t.Fatalf("profiles: %v %v", profiles, err)
	}
	for _, p := range profiles {
		profile := strings.TrimSuffix(filepath.Base(p), ".yaml")
		if profile == "empty" {
			continue // renders nothing: translate has no release to write
		}
		t.Run(profile, func(t *testing.T) {
			h := newHelmRun(t, "")
			generated, stderr, err := run(t, "manifest", "generate", "--set", "profile="+profile)
			if err != nil {
				t.Fatalf("manifest generate: %v\n%s", err, stderr)
			}
			want, err := render.ParseObjects([]byte(generated))
			if err != nil {
				t.Fatal(err)
			}
			dir, rels := translateTo(t, "--set", "profile="+profile)
			var got []*unstructured.Unstructured
			for _, r := range rels {
				out := h.ok("helm", "template", r.name, filepath.Join(dir, "charts", r.chart), "--namespace", r.namespace,
					"-f", filepath.Join(dir, r.values), "--include-crds", "--kube-version", render.DefaultKubeVersion)
				objs, err := render.ParseObjects([]byte(out))
				if err != nil {
					t.Fatalf("helm template %s: %v", r.name, err)
				}
				got = append(got, objs...)
			}
			g, w := byIdentity(t, "helm template", got), byIdentity(t, "manifest generate", want)
			var missing, extra, differ, excepted []string
			for k, o := range w {
				name := kube.Describe(o)
				p, ok := g[k]
				switch {
				case !ok:
					missing = append(missing, name)
				case translateExceptions[name]:
					excepted = append(excepted, name)
				case !reflect.DeepEqual(o.Object, p.Object):
					d, _ := objdiff.Diff(o, p)
					differ = append(differ, name+"\n"+d)
				}
			}
			for k, o := range g {
				if _, ok := w[k]; !ok {
					extra = append(extra, kube.Describe(o))
				}
			}
			sort.Strings(missing)
			sort.Strings(extra)
			sort.Strings(differ)
			if len(missing)+len(extra)+len(differ) > 0 {
				t.Errorf("helm template of the translated values is not manifest generate's output:\nmissing: %v\nextra: %v\ndiffering:\n%s",
					missing, extra, strings.Join(differ, "\n"))
			}
			if len(w) < 10 {
				t.Errorf("compared only %d objects", len(w))
			}
			t.Logf("%d objects the same in %d releases; excepted: %v", len(w)-len(excepted), len(rels), excepted)
		})
	}
}

// liveIdentities reads, for the rendered objects, their UIDs and resourceVersions.
func liveIdentities(t *testing.T, client *kube.Client, objs []*unstructured.Unstructured) (uids, versions map[string]string) {
	t.Helper()
	uids, versions = map[string]string{}, map[string]string{}
	for _, o := range objs {
		live, err := client.Get(context.Background(), o)
		if err != nil || live == nil {
			t.Fatalf("%s: missing (%v)", kube.Describe(o), err)
		}
		uids[kube.Describe(o)] = string(live.GetUID())
		versions[kube.Describe(o)] = live.GetResourceVersion()
	}
	return uids, versions
}

// settledVersions waits until the objects' resourceVersions stop changing (controllers
// write the status of what was just installed) and returns them.
func settledVersions(t *testing.T, client *kube.Client, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	_, prev := liveIdentities(t, client, objs)
	for deadline := time.Now().Add(time.Minute); ; {
		time.Sleep(time.Second)
		_, now := liveIdentities(t, client, objs)
		if equalMaps(prev, now) {
			return now
		}
		if time.Now().After(deadline) {
			t.Fatalf("the objects kept changing for a minute:\n  %s", strings.Join(versionsDiff(prev, now), "\n  "))
		}
		prev = now
	}
}

// TestMigrateIstioctlToHelmE2E: an istioctl install of demo moved under Helm by the
// translate scripts, run with the helm CLI: no object is recreated, helm list shows every
// release deployed, and a helm upgrade with the same values changes nothing.
func TestMigrateIstioctlToHelmE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	h := newHelmRun(t, c.Kubeconfig)
	istioctl := istioctlOn(t, c)
	client, err := kube.NewClientForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	lap := stopwatch(t)
	istioctl("uninstall", "--purge", "-y")
	lap("purge")
	t.Cleanup(func() {
		// Our charts label every object for a purge; the release records go with it.
		_, _, _ = run(t, "--kubeconfig", c.Kubeconfig, "uninstall", "--purge", "-y")
		_ = c.Kube.CoreV1().Secrets("istio-system").DeleteCollection(context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: "owner=helm"})
	})

	istioctl("install", "--set", "profile=demo", "-y")
	generated := istioctl("manifest", "generate", "--set", "profile=demo")
	objs, err := render.ParseObjects([]byte(generated))
	if err != nil {
		t.Fatal(err)
	}
	uids, _ := liveIdentities(t, client, objs)
	lap("istioctl install demo")

	dir, rels := translateTo(t, "--set", "profile=demo")
	var names []string
	for _, r := range rels {
		h.ok("bash", filepath.Join(dir, r.script))
		names = append(names, r.namespace+"/"+r.name)
	}
	lap("translate and the scripts")
	if want := []string{"istio-system/base", "istio-system/pilot", "istio-system/istio-ingressgateway", "istio-system/istio-egressgateway"}; !reflect.DeepEqual(names, want) {
		t.Errorf("releases %v, want %v", names, want)
	}
	after, versions := liveIdentities(t, client, objs)
	if diffs := versionsDiff(uids, after); len(diffs) > 0 {
		t.Errorf("moving under Helm recreated objects (their UIDs changed):\n  %s", strings.Join(diffs, "\n  "))
	}
	listed := h.releases()
	for _, n := range names {
		if listed[n] != "deployed" {
			t.Errorf("helm list: %s is %q, want deployed (all: %v)", n, listed[n], listed)
		}
	}
	if len(listed) != len(names) {
		t.Errorf("helm list shows %v, want exactly %v", listed, names)
	}

	// kwok runs no istiod: do what it does once it serves, which the chart leaves to it on an
	// upgrade (it renders the validator's failurePolicy only on install, fail-open).
	validators := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	vwc, err := validators.Get(context.Background(), "istio-validator-istio-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fail := admissionregistrationv1.Fail
	for i := range vwc.Webhooks {
		vwc.Webhooks[i].FailurePolicy = &fail
	}
	if _, err := validators.Update(context.Background(), vwc, metav1.UpdateOptions{FieldManager: "pilot-discovery"}); err != nil {
		t.Fatal(err)
	}

	// The same values again: Helm finds nothing to change.
	versions = settledVersions(t, client, objs)
	lap("settle")
	for _, r := range rels {
		h.ok("helm", "upgrade", r.name, filepath.Join(dir, "charts", r.chart), "--namespace", r.namespace, "-f", filepath.Join(dir, r.values))
	}
	lap("helm upgrade")
	if _, now := liveIdentities(t, client, objs); !equalMaps(versions, now) {
		t.Errorf("helm upgrade with the same values changed objects:\n  %s", strings.Join(versionsDiff(versions, now), "\n  "))
	}
	for n, status := range h.releases() {
		if status != "deployed" {
			t.Errorf("after helm upgrade, %s is %q", n, status)
		}
	}
}
