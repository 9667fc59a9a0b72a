package images

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/distribution/reference"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Source says where an image was found.
type Source string

// The sources.
const (
	// Rendered is a container of a workload the install renders.
	Rendered Source = "rendered"
	// Injected is the proxy (and its init container) istiod injects into pods and into
	// gateways that declare image: auto, from the injector's values.
	Injected Source = "injected"
	// Running is a container of a pod in the cluster.
	Running Source = "running"
	// Annotation is a pod's sidecar.istio.io/proxyImage annotation.
	Annotation Source = "annotation"
)

// Image is one image an install needs or a cluster runs.
type Image struct {
	// Component is the component (instance) that runs it: "Pilot", "IngressGateways/edge";
	// for the injected proxy "injected proxy"; for a pod, namespace/name.
	Component string `json:"component"`
	// Container is the container that runs it ("" for the injected proxy's values).
	Container string `json:"container,omitempty"`
	Image     string `json:"image"`
	Source    Source `json:"source"`
	// Field is the spec field that sets the image's registry ("" for a running pod).
	Field string `json:"field,omitempty"`
	// Retired says why the image's registry is going away ("" when it is not).
	Retired string `json:"retired,omitempty"`
}

// InjectedProxy names the injected proxy in Image.Component.
const InjectedProxy = "injected proxy"

// retired are the registries Istio stops publishing to, and what to use instead.
var retired = map[string]string{
	"gcr.io/istio-release": "gcr.io/istio-release ends in 2026: mirror the image or use docker.io/istio",
	"registry.istio.io":    "registry.istio.io is being retired: mirror the image or use docker.io/istio",
}

// RetiredReason says why ref's registry is being retired, or "".
func RetiredReason(ref string) string {
	for prefix, why := range retired {
		if ref == prefix || strings.HasPrefix(ref, prefix+"/") {
			return why
		}
	}
	return ""
}

// FromManifests lists the images of rendered manifests: every container of every workload
// by component instance, and the proxy istiod injects, from the values its injector
// ConfigMap carries. tree is the resolved spec the manifests were rendered from: the fields
// that set each image are named from it.
func FromManifests(tree map[string]any, ms []render.Manifest) ([]Image, error) {
	var out, inj []Image
	for _, m := range ms {
		for _, o := range m.Objects {
			for _, c := range containers(o) {
				if c.image == "auto" || c.image == "" {
					continue // a gateway istiod injects: its proxy is the injected one
				}
				out = append(out, Image{Component: m.Instance.Key(), Container: c.name, Image: c.image, Source: Rendered, Field: HubField(tree, m.Instance, c.image)})
			}
			if inj != nil || o.GetKind() != "ConfigMap" || !strings.HasPrefix(o.GetName(), "istio-sidecar-injector") {
				continue
			}
			var err error
			if inj, err = injected(tree, o); err != nil {
				return nil, fmt.Errorf("ConfigMap %s: %w", o.GetName(), err)
			}
		}
	}
	out = append(out, inj...)
	for i := range out {
		out[i].Retired = RetiredReason(out[i].Image)
	}
	return out, nil
}

// injected is the proxy image istiod builds from the injector's values: global.proxy.image
// as it is when it holds a "/", else <global.hub>/<global.proxy.image>:<global.tag>[-<variant>].
func injected(tree map[string]any, cm *unstructured.Unstructured) ([]Image, error) {
	_, str, err := injectorValues(cm)
	if err != nil {
		return nil, err
	}
	ref, field := ProxyImage(str("global", "hub"), str("global", "proxy", "image"), str("global", "tag"), str("global", "variant"))
	if field == "" {
		field = globalHubField(tree)
	}
	out := []Image{{Component: InjectedProxy, Container: "istio-proxy", Image: ref, Source: Injected, Field: field}}
	if init := str("global", "proxy_init", "image"); strings.Contains(init, "/") {
		out = append(out, Image{Component: InjectedProxy, Container: "istio-init", Image: init, Source: Injected, Field: "spec.values.global.proxy_init.image"})
	}
	return out, nil
}

// ProxyImage is the image istiod injects for these values, and the field that sets its
// registry ("" when it is global.hub's): the injection templates use global.proxy.image as
// it is when it holds a "/".
func ProxyImage(hub, image, tag, variant string) (ref, field string) {
	if strings.Contains(image, "/") {
		return image, "spec.values.global.proxy.image"
	}
	// "": the field that sets global.hub (globalHubField)
	if image == "" {
		image = "proxyv2"
	}
	if variant != "" && variant != "default" {
		tag += "-" + variant
	}
	return hub + "/" + image + ":" + tag, ""
}

// HubField names the spec field whose value set the registry of an instance's image: the
// most specific of the component's own hub, its values' hub, values.global.hub and spec.hub
// that the image starts with (charts do not all read every one), else its image or k8s
// settings, which can hold a whole reference.
func HubField(tree map[string]any, inst component.Instance, image string) string {
	type cand struct{ field, value string }
	var cs []cand
	if inst.Hub != "" {
		f := "spec.components." + inst.SpecKey + ".hub"
		if inst.Multi {
			f = fmt.Sprintf("spec.components.%s[name=%s].hub", inst.SpecKey, inst.InstanceName)
		}
		cs = append(cs, cand{f, inst.Hub})
	}
	lookup := func(keys ...string) string {
		v, _ := spec.Lookup(tree, keys...)
		if s, ok := v.(string); ok {
			return s
		}
		return ""
	}
	if inst.ValuesRoot != "" && inst.ValuesRoot != "global" {
		root := strings.Split(inst.ValuesRoot, ".")
		cs = append(cs, cand{"spec.values." + inst.ValuesRoot + ".hub", lookup(append([]string{"spec", "values"}, append(root, "hub")...)...)})
	}
	cs = append(cs, cand{"spec.values.global.hub", lookup("spec", "values", "global", "hub")}, cand{"spec.hub", lookup("spec", "hub")})
	for _, c := range cs {
		if c.value != "" && strings.HasPrefix(image, strings.TrimSuffix(c.value, "/")+"/") {
			return c.field
		}
	}
	if inst.ValuesRoot != "" && inst.ValuesRoot != "global" {
		return fmt.Sprintf("spec.values.%s.image or spec.components.%s k8s overlays", inst.ValuesRoot, inst.SpecKey)
	}
	return "spec.components." + inst.SpecKey + " k8s overlays"
}

// globalHubField names the field that sets values.global.hub: itself, or spec.hub.
func globalHubField(tree map[string]any) string {
	if v, ok := spec.Lookup(tree, "spec", "values", "global", "hub"); ok && v != nil && v != "" {
		return "spec.values.global.hub"
	}
	return "spec.hub"
}

type container struct{ name, image string }

// containers are the init and main containers of a workload or pod.
func containers(o *unstructured.Unstructured) []container {
	podSpec, ok := render.PodSpecPath(o.GetKind())
	if !ok {
		return nil
	}
	var out []container
	for _, list := range []string{"initContainers", "containers"} {
		cs, _, _ := unstructured.NestedSlice(o.Object, append(podSpec, list)...)
		for _, c := range cs {
			m, _ := c.(map[string]any)
			name, _ := m["name"].(string)
			img, _ := m["image"].(string)
			out = append(out, container{name, img})
		}
	}
	return out
}

// ProxyImageAnnotation is the pod annotation that replaces the injected proxy's image.
const ProxyImageAnnotation = "sidecar.istio.io/proxyImage"

// FromPods lists the images pods run: every container (an injected sidecar among them),
// and a proxyImage annotation's image when it holds a whole reference.
func FromPods(pods []unstructured.Unstructured) []Image {
	var out []Image
	for i := range pods {
		p := &pods[i]
		who := p.GetNamespace() + "/" + p.GetName()
		for _, c := range containers(p) {
			out = append(out, Image{Component: who, Container: c.name, Image: c.image, Source: Running})
		}
		if a := p.GetAnnotations()[ProxyImageAnnotation]; a != "" {
			out = append(out, Image{Component: who, Image: a, Source: Annotation, Field: "metadata.annotations[" + ProxyImageAnnotation + "]"})
		}
	}
	for i := range out {
		out[i].Retired = RetiredReason(out[i].Image)
	}
	return out
}

// Unique are the distinct image references of list, sorted.
func Unique(list []Image) []string {
	seen := map[string]bool{}
	var out []string
	for _, im := range list {
		if !seen[im.Image] {
			seen[im.Image] = true
			out = append(out, im.Image)
		}
	}
	sort.Strings(out)
	return out
}

// Repository is the registry and repository path an image is pulled from, as normalized
// references name it ("docker.io/istio/pilot" for "istio/pilot:1.31.0").
func Repository(ref string) (string, error) {
	n, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", fmt.Errorf("image %q: %w", ref, err)
	}
	return n.Name(), nil
}

// injectorValues reads the injector ConfigMap's values; str reads one by its path ("" when
// unset).
func injectorValues(cm *unstructured.Unstructured) (vals map[string]any, str func(path ...string) string, err error) {
	raw, _, _ := unstructured.NestedString(cm.Object, "data", "values")
	if err := json.Unmarshal([]byte(raw), &vals); err != nil {
		return nil, nil, fmt.Errorf("reading the injector's values: %w", err)
	}
	if vals == nil {
		vals = map[string]any{}
	}
	return vals, func(path ...string) string {
		v, _ := spec.Lookup(vals, path...)
		if v == nil {
			return ""
		}
		return fmt.Sprint(v)
	}, nil
}
