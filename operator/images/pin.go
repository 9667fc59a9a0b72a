package images

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/render"
)

// Pinned is ref with its digest: name:tag@sha256:... (the tag stays: version detection and
// the skew checks read it).
func Pinned(ref, digest string) string { return ref + "@" + digest }

// IsPinned says whether ref names a digest.
func IsPinned(ref string) bool { return strings.Contains(ref, "@") }

// Pin rewrites the rendered manifests in place so that every image of digests runs by
// digest: each container's image, and the injected proxy, which istiod builds from one
// global hub and tag. The injector's values get values.global.proxy.image (and
// global.proxy_init.image, unless it names an image of its own) set to the pinned whole
// reference: the injection templates use an image holding a "/" as it is. Images already
// pinned, and images digests does not hold, stay as they are.
func Pin(ms []render.Manifest, digests map[string]string) error {
	for _, m := range ms {
		for _, o := range m.Objects {
			pinContainers(o, digests)
			if o.GetKind() == "ConfigMap" && strings.HasPrefix(o.GetName(), "istio-sidecar-injector") {
				if err := pinInjector(o, digests); err != nil {
					return fmt.Errorf("ConfigMap %s: %w", o.GetName(), err)
				}
			}
		}
	}
	return nil
}

func pinContainers(o *unstructured.Unstructured, digests map[string]string) {
	podSpec, ok := render.PodSpecPath(o.GetKind())
	if !ok {
		return
	}
	for _, list := range []string{"initContainers", "containers"} {
		cs, ok, _ := unstructured.NestedSlice(o.Object, append(podSpec, list)...)
		if !ok {
			continue
		}
		changed := false
		for _, c := range cs {
			m, _ := c.(map[string]any)
			img, _ := m["image"].(string)
			if d := digests[img]; d != "" && !IsPinned(img) {
				m["image"], changed = Pinned(img, d), true
			}
		}
		if changed {
			_ = unstructured.SetNestedSlice(o.Object, cs, append(podSpec, list)...)
		}
	}
}

func pinInjector(cm *unstructured.Unstructured, digests map[string]string) error {
	vals, str, err := injectorValues(cm)
	if err != nil {
		return err
	}
	ref, _ := ProxyImage(str("global", "hub"), str("global", "proxy", "image"), str("global", "tag"), str("global", "variant"))
	d := digests[ref]
	if d == "" || IsPinned(ref) {
		return nil
	}
	global, _ := vals["global"].(map[string]any)
	if global == nil {
		global = map[string]any{}
		vals["global"] = global
	}
	set := func(key string) {
		m, _ := global[key].(map[string]any)
		if m == nil {
			m = map[string]any{}
			global[key] = m
		}
		m["image"] = Pinned(ref, d)
	}
	set("proxy")
	if !strings.Contains(str("global", "proxy_init", "image"), "/") {
		set("proxy_init")
	}
	b, err := json.Marshal(vals)
	if err != nil {
		return err
	}
	return unstructured.SetNestedField(cm.Object, string(b), "data", "values")
}

// Digests are the digests of list's pinned images, by the reference without its digest:
// what an install record keeps of manifests already pinned (a rollback's, from its record).
func Digests(list []Image) map[string]string {
	var out map[string]string
	for _, im := range list {
		ref, d, ok := strings.Cut(im.Image, "@")
		if !ok {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[ref] = d
	}
	return out
}
