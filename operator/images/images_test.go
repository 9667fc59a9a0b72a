package images

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/rendertest"
)

func specImages(t *testing.T, sets ...string) []Image {
	t.Helper()
	res, ms := rendertest.Sets(t, sets...)
	list, err := FromManifests(res.Tree, ms)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func key(im Image) string { return im.Component + " " + im.Container + " " + im.Image + " " + im.Field }

func TestFromManifests(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
		want []string
	}{
		{"demo", []string{"profile=demo"}, []string{
			"Pilot discovery docker.io/istio/pilot:1.31.0 spec.hub",
			"IngressGateways/istio-ingressgateway istio-proxy docker.io/istio/proxyv2:1.31.0 spec.hub",
			"EgressGateways/istio-egressgateway istio-proxy docker.io/istio/proxyv2:1.31.0 spec.hub",
			"injected proxy istio-proxy docker.io/istio/proxyv2:1.31.0 spec.hub",
		}},
		{"ambient, one hub", []string{"profile=ambient", "hub=reg.local:5000/m"}, []string{
			"Pilot discovery reg.local:5000/m/pilot:1.31.0-distroless spec.hub",
			"Cni install-cni reg.local:5000/m/install-cni:1.31.0-distroless spec.hub",
			"Ztunnel istio-proxy reg.local:5000/m/ztunnel:1.31.0-distroless spec.hub",
			"injected proxy istio-proxy reg.local:5000/m/proxyv2:1.31.0-distroless spec.hub",
		}},
		{"fields", []string{"profile=demo", "hub=reg.local/m", "components.pilot.hub=docker.io/other", "values.global.hub=reg.local/g",
			"values.pilot.hub=reg.local/p", "values.global.proxy.image=reg.local/x/proxyv2:9"}, []string{
			"Pilot discovery docker.io/other/pilot:1.31.0 spec.components.pilot.hub",
			"IngressGateways/istio-ingressgateway istio-proxy reg.local/x/proxyv2:9 spec.values.gateways.istio-ingressgateway.image or spec.components.ingressGateways k8s overlays",
			"EgressGateways/istio-egressgateway istio-proxy reg.local/x/proxyv2:9 spec.values.gateways.istio-egressgateway.image or spec.components.egressGateways k8s overlays",
			"injected proxy istio-proxy reg.local/x/proxyv2:9 spec.values.global.proxy.image",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, im := range specImages(t, tc.sets...) {
				got = append(got, key(im))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("images:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestRetiredAndOutside(t *testing.T) {
	list := specImages(t, "profile=demo", "hub=gcr.io/istio-release")
	for _, im := range list {
		if im.Retired == "" {
			t.Errorf("%s not flagged as retired", im.Image)
		}
	}
	if RetiredReason("docker.io/istio/pilot:1") != "" || RetiredReason("registry.istio.io.example/x") != "" {
		t.Error("a live registry flagged as retired")
	}
	out, err := Outside(specImages(t, "profile=demo", "hub=reg.local:5000/m", "values.pilot.hub=docker.io/istio"), []string{"reg.local:5000/m"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Field != "spec.values.pilot.hub" || out[0].Image != "docker.io/istio/pilot:1.31.0" {
		t.Fatalf("outside: %+v", out)
	}
	msg := (&OutsideError{Allowed: []string{"reg.local:5000/m"}, Images: out}).Error()
	for _, want := range []string{"docker.io/istio/pilot:1.31.0", "spec.values.pilot.hub"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %q", msg, want)
		}
	}
	// docker.io's short names are on docker.io; a registry is not a prefix of a longer host.
	for ref, allowed := range map[string]bool{"istio/pilot:1": true, "docker.io.evil/istio/pilot:1": false, "docker.io/istio/pilot:1": true} {
		o, _ := Outside([]Image{{Image: ref}}, []string{"docker.io/istio"})
		if (len(o) == 0) != allowed {
			t.Errorf("%s allowed=%v, want %v", ref, len(o) == 0, allowed)
		}
	}
}

func TestFromPods(t *testing.T) {
	pod := unstructured.Unstructured{Object: map[string]any{
		"kind":     "Pod",
		"metadata": map[string]any{"name": "web", "namespace": "app", "annotations": map[string]any{ProxyImageAnnotation: "registry.istio.io/release/proxyv2:1.30.0"}},
		"spec": map[string]any{
			"initContainers": []any{map[string]any{"name": "istio-init", "image": "docker.io/istio/proxyv2:1.31.0"}},
			"containers":     []any{map[string]any{"name": "app", "image": "nginx"}, map[string]any{"name": "istio-proxy", "image": "gcr.io/istio-release/proxyv2:1.31.0"}},
		},
	}}
	var got []string
	for _, im := range FromPods([]unstructured.Unstructured{pod}) {
		got = append(got, key(im)+" "+string(im.Source)+" "+map[bool]string{true: "retired", false: "live"}[im.Retired != ""])
	}
	want := []string{
		"app/web istio-init docker.io/istio/proxyv2:1.31.0  running live",
		"app/web app nginx  running live",
		"app/web istio-proxy gcr.io/istio-release/proxyv2:1.31.0  running retired",
		"app/web  registry.istio.io/release/proxyv2:1.30.0 metadata.annotations[sidecar.istio.io/proxyImage] annotation retired",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOneHubMovesEveryImage: spec.hub alone moves every image each profile renders or
// injects (the rule lives in render.Values: spec.hub is values.global.hub, which every
// chart and the injector read unless a more specific hub is set).
func TestOneHubMovesEveryImage(t *testing.T) {
	for _, p := range []string{"default", "demo", "minimal", "ambient", "remote", "empty", "preview", "stable", "eastwest", "openshift", "openshift-ambient"} {
		t.Run(p, func(t *testing.T) {
			res, err := spec.Resolve(spec.Options{Sets: []string{"profile=" + p, "hub=mirror.local:5000/mesh"}})
			if err != nil {
				t.Fatalf("profile %s: %v", p, err)
			}
			r, _ := render.NewRenderer("")
			ms, _, err := r.Render(res)
			if err != nil {
				t.Fatal(err)
			}
			list, err := FromManifests(res.Tree, ms)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Outside(list, []string{"mirror.local:5000/mesh"})
			if err != nil || len(out) > 0 {
				t.Errorf("outside the hub: %+v %v", out, err)
			}
		})
	}
}

func TestPin(t *testing.T) {
	res, err := spec.Resolve(spec.Options{Sets: []string{"profile=demo", "hub=reg.local/m"}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := render.NewRenderer("")
	ms, _, err := r.Render(res)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := FromManifests(res.Tree, ms)
	digests := map[string]string{}
	for i, ref := range Unique(before) {
		digests[ref] = "sha256:" + strings.Repeat(string(rune('a'+i)), 64)
	}
	for range 2 { // pinning twice changes nothing more
		if err := Pin(ms, digests); err != nil {
			t.Fatal(err)
		}
	}
	after, err := FromManifests(res.Tree, ms)
	if err != nil {
		t.Fatal(err)
	}
	// The injected init container now names the pinned proxy too (proxy_init.image).
	if len(after) != len(before)+1 {
		t.Fatalf("%d images after pinning, %d before", len(after), len(before))
	}
	for i, im := range before {
		if want := im.Image + "@" + digests[im.Image]; after[i].Image != want {
			t.Errorf("%s %s: %s, want %s", im.Component, im.Container, after[i].Image, want)
		}
	}
	got := Digests(after)
	for ref, d := range digests {
		if got[ref] != d {
			t.Errorf("Digests: %s at %q, pinned at %s", ref, got[ref], d)
		}
	}
	if Digests(before) != nil {
		t.Errorf("Digests of unpinned images: %v", Digests(before))
	}
	proxy, init := after[len(after)-2], after[len(after)-1]
	if proxy.Component != InjectedProxy || proxy.Field != "spec.values.global.proxy.image" || init.Container != "istio-init" || init.Image != proxy.Image {
		t.Errorf("injected proxy: %+v, init: %+v", proxy, init)
	}
}
