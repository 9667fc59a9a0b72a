package cmd_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/registry"
)

// TestImagesPinnedInstallE2E: the demo profile's images mirrored into a loopback registry;
// a spec leaving one image on docker.io is refused by --allowed-registries before any write,
// naming image and field; install --set hub=<mirror> --pin-digests applies only digests
// from the mirror (every workload, the injector's values, and a pod the real istiod
// injects); a re-run after a tag moved writes nothing and keeps the digests; images list
// --from-cluster sees them; verify-install reports a workload whose digest left the record.
func TestImagesPinnedInstallE2E(t *testing.T) {
	c := cluster.Get(t)
	c.RequireRealIstiod(t)
	t.Setenv("HOME", t.TempDir())
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()
	ctx := context.Background()

	src, dst := registry.Start(t, ""), registry.Start(t, "")
	srcHub, hub := src.Host+"/istio", dst.Host+"/mesh"
	for _, im := range listImages(t, "--set", "profile=demo", "--set", "hub="+srcHub) {
		src.Push(t, im.Image, 2)
	}
	if _, stderr, err := harness.Run(t, "x", "images", "mirror", "--set", "profile=demo", "--set", "hub="+srcHub, "--to", hub); err != nil {
		t.Fatalf("mirror: %v\n%s", err, stderr)
	}
	spec := []string{"--set", "profile=demo", "--set", "hub=" + hub}

	// One image left on docker.io: refused before any write, naming image and field.
	harness.Settled(t, c)
	before := harness.AuditWrites(t, c)
	_, _, err := harness.Run(t, append([]string{"--kubeconfig", c.Kubeconfig, "install", "-y", "--pin-digests", "--allowed-registries", hub,
		"--set", "values.pilot.hub=docker.io/istio"}, spec...)...)
	if err == nil || !strings.Contains(err.Error(), "docker.io/istio/pilot:1.31.0") || !strings.Contains(err.Error(), "spec.values.pilot.hub") {
		t.Fatalf("an image on docker.io: %v", err)
	}
	// A registry that is down: named, before any write.
	down := src.Host
	src.Stop(t)
	_, _, err = harness.Run(t, "--kubeconfig", c.Kubeconfig, "install", "-y", "--pin-digests", "--set", "profile=demo", "--set", "hub="+down+"/istio")
	if err == nil || !strings.Contains(err.Error(), "registry "+down) {
		t.Fatalf("pinning from a registry that is down: %v", err)
	}
	if w := harness.WritesBetween(before, harness.AuditWrites(t, c)); len(w) > 0 {
		t.Fatalf("the refused installs wrote: %v", w)
	}

	istioctl(append([]string{"install", "-y", "--pin-digests", "--allowed-registries", hub}, spec...)...)
	pinned := func(what, img string) {
		t.Helper()
		name, digest, ok := strings.Cut(img, "@")
		if !ok || !strings.HasPrefix(name, hub+"/") {
			t.Errorf("%s: %s is not pinned to %s", what, img, hub)
			return
		}
		if want := resolve(t, name); digest != want {
			t.Errorf("%s: %s, the mirror has %s at %s", what, img, name, want)
		}
	}
	deps, err := c.Kube.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: "operator.istio.io/component"})
	if err != nil || len(deps.Items) < 3 {
		t.Fatalf("installed Deployments: %d, %v", len(deps.Items), err)
	}
	for _, d := range deps.Items {
		for _, ct := range append(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers...) {
			pinned("Deployment "+d.Name+" "+ct.Name, ct.Image)
		}
	}
	cm, err := c.Kube.CoreV1().ConfigMaps("istio-system").Get(ctx, "istio-sidecar-injector", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Global struct {
			Proxy     struct{ Image string } `json:"proxy"`
			ProxyInit struct{ Image string } `json:"proxy_init"`
		} `json:"global"`
	}
	if err := json.Unmarshal([]byte(cm.Data["values"]), &raw); err != nil {
		t.Fatal(err)
	}
	pinned("the injector's global.proxy.image", raw.Global.Proxy.Image)
	pinned("the injector's global.proxy_init.image", raw.Global.ProxyInit.Image)

	// A pod the real istiod injects runs the pinned proxy.
	ns := harness.LabelledNamespace(t, c, map[string]string{"istio-injection": "enabled"})
	if by := injectedBy(t, c, ns, "web"); by != "default" {
		t.Fatalf("injected by %q", by)
	}
	pods, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("injected pods: %v", err)
	}
	sidecars := 0
	for _, ct := range append(pods.Items[0].Spec.InitContainers, pods.Items[0].Spec.Containers...) {
		if ct.Name == "istio-proxy" || ct.Name == "istio-init" || ct.Name == "istio-validation" {
			pinned("injected "+ct.Name, ct.Image)
			sidecars++
		}
	}
	if sidecars == 0 {
		t.Fatalf("no sidecar injected: %+v", pods.Items[0].Spec.Containers)
	}
	fromCluster := listImages(t, "--kubeconfig", c.Kubeconfig, "--from-cluster")
	seen := false
	for _, im := range fromCluster {
		if im.Component == ns+"/"+pods.Items[0].Name && im.Container == "istio-proxy" && strings.HasPrefix(im.Image, hub+"/proxyv2:") {
			seen = true
		}
	}
	if !seen {
		t.Errorf("images list --from-cluster does not show the injected sidecar of %s: %+v", ns, fromCluster)
	}

	// The tag moves in the mirror: a re-run keeps the recorded digests and writes nothing.
	dst.Push(t, hub+"/proxyv2:1.31.0", 1)
	harness.Settled(t, c)
	before = harness.AuditWrites(t, c)
	istioctl(append([]string{"install", "-y", "--pin-digests", "--allowed-registries", hub}, spec...)...)
	if w := harness.WritesBetween(before, harness.AuditWrites(t, c)); len(w) > 0 {
		t.Errorf("a re-run after the tag moved wrote: %v", w)
	}
	istioctl(append([]string{"verify-install"}, spec...)...)

	// A workload whose digest left the record: verify-install says so.
	gw, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istio-ingressgateway", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	moved := hub + "/proxyv2:1.31.0@" + resolve(t, hub+"/proxyv2:1.31.0")
	setImage(gw, "istio-proxy", moved)
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Update(ctx, gw, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, _, err := harness.Run(t, append([]string{"--kubeconfig", c.Kubeconfig, "verify-install"}, spec...)...)
	if err == nil || !strings.Contains(out, "istio-ingressgateway") || !strings.Contains(out, moved[strings.IndexByte(moved, '@')+1:][:19]) {
		t.Errorf("verify-install with a moved digest: %v\n%s", err, out)
	}
}

func setImage(d *appsv1.Deployment, container, image string) {
	for i := range d.Spec.Template.Spec.Containers {
		if d.Spec.Template.Spec.Containers[i].Name == container {
			d.Spec.Template.Spec.Containers[i].Image = image
		}
	}
}

func resolve(t *testing.T, ref string) string { return registry.Digest(t, ref, authn.DefaultKeychain) }
