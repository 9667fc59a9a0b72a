package cmd_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// upstreamCharts is the charts directory of upstream's istio.io/istio module at the version
// hack/bench.sh pins, from the module cache (make test downloads it before the sandbox).
func upstreamCharts(t *testing.T) string {
	t.Helper()
	bench, err := os.ReadFile("../../hack/bench.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^UPSTREAM_VERSION=(\S+)$`).FindSubmatch(bench)
	if m == nil {
		t.Fatal("hack/bench.sh pins no UPSTREAM_VERSION")
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

// TestMigrateHelmToIstioctlE2E: upstream's base and istio-discovery charts installed with
// the helm CLI, as a new user would, then taken over by install --take-ownership. A dry run
// with --retire-helm-releases lists the release records it would delete and writes
// nothing; without the flag the install warns, naming both releases, and helm list still
// shows them; with it no object is recreated, helm list is empty and verify-install passes.
func TestMigrateHelmToIstioctlE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	h := newHelmRun(t, c.Kubeconfig)
	x := istioctlRunner{t, c.Kubeconfig}
	client, err := kube.NewClientForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	lap := stopwatch(t)
	charts := upstreamCharts(t)
	x.ok("uninstall", "--purge", "-y")
	lap("purge")
	t.Cleanup(func() {
		// Upstream's CRDs carry no label a purge selects: a release not retired (the test
		// failed) is uninstalled by Helm, or the next install would find them foreign.
		for r := range h.releases() {
			ns, name, _ := strings.Cut(r, "/")
			_ = h.command("helm", "uninstall", name, "--namespace", ns).Run()
		}
		_, _ = x.run("uninstall", "--purge", "-y")
	})
	h.ok("helm", "install", "istio-base", filepath.Join(charts, "base"), "--namespace", "istio-system", "--create-namespace")
	h.ok("helm", "install", "istiod", filepath.Join(charts, "istio-control", "istio-discovery"), "--namespace", "istio-system")
	releases := []string{"istio-system/istio-base", "istio-system/istiod"}
	objs := append(releaseObjects(t, h, client, "istio-base", "istio-system"), releaseObjects(t, h, client, "istiod", "istio-system")...)
	uids, _ := liveIdentities(t, client, objs)
	if len(uids) < 20 {
		t.Fatalf("the Helm releases hold only %d objects", len(uids))
	}
	install := []string{"install", "--set", "profile=minimal", "-y", "--take-ownership"}
	lap("helm install")

	out := x.ok(append(install, "--retire-helm-releases", "--dry-run")...)
	mustContain(t, "dry run", out, "Helm release istio-system/istio-base would be retired", "Secret/istio-system/sh.helm.release.v1.istio-base.v1",
		"Helm release istio-system/istiod would be retired", "Secret/istio-system/sh.helm.release.v1.istiod.v1", "Dry run complete, nothing was written")
	if got := h.releases(); len(got) != 2 {
		t.Errorf("after the dry run helm list shows %v, want both releases", got)
	}
	lap("dry run")

	out = x.ok(install...)
	mustContain(t, "install without "+"--retire-helm-releases", out, "Helm release(s) "+strings.Join(releases, ", ")+" still list objects this install owns",
		"--retire-helm-releases", "✔ Installation complete")
	if got := h.releases(); got[releases[0]] != "deployed" || got[releases[1]] != "deployed" {
		t.Errorf("without the flag helm list shows %v, want both releases deployed", got)
	}
	lap("install without the flag")

	out = x.ok(append(install, "--retire-helm-releases")...)
	mustContain(t, "install --retire-helm-releases", out, "✔ Helm release istio-system/istio-base retired", "✔ Helm release istio-system/istiod retired", "✔ Installation complete")
	if strings.Contains(out, "still list objects") {
		t.Errorf("the retiring install still warns about the releases:\n%s", out)
	}
	if got := h.releases(); len(got) != 0 {
		t.Errorf("after retiring, helm list shows %v", got)
	}
	lap("install with the flag")
	after, _ := liveIdentities(t, client, objs)
	if diffs := versionsDiff(uids, after); len(diffs) > 0 {
		t.Errorf("the takeover recreated objects (their UIDs changed):\n  %s", strings.Join(diffs, "\n  "))
	}
	for _, o := range objs {
		live, _ := client.Get(context.Background(), o)
		if a := live.GetAnnotations(); a["meta.helm.sh/release-name"] != "" {
			t.Errorf("%s still names Helm release %s", kube.Describe(o), a["meta.helm.sh/release-name"])
		}
	}
	out = x.ok("verify-install", "--set", "profile=minimal")
	mustContain(t, "verify-install", out, "✔ Istio is installed and verified successfully")
}
