package spec

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
)

// Every image an install writes (its workloads', and the sidecars' and gateways' istiod
// injects from the values it is given) is <hub>/<image>:<tag>[-<variant>], or an image
// holding a "/" as it is. Each part is checked where it is set, so a reference no runtime
// can pull is an error naming the field that made it. Upstream checks only spec.hub and
// spec.tag, and renders "/pilot:latest" for --set values.global.hub=.
var (
	// One path component of an image name (pilot, proxyv2, install-cni).
	imageNameRE = lazyRE(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
)

// mustSet are the image parts whose empty value is used as it is (an empty registry or
// tag) rather than falling back to a default: the global ones, and ztunnel's, whose chart
// lets its own values replace the global ones even when empty.
var mustSet = map[string]bool{"global.hub": true, "global.tag": true, "ztunnel.hub": true, "ztunnel.tag": true}

// checkImages reports the image parts of spec (spec.hub and spec.tag, and every image
// field of spec.values and spec.unvalidatedValues) that make an invalid reference.
func checkImages(spec map[string]any, bad func(path, format string, args ...any)) {
	for _, k := range []string{"hub", "tag"} {
		if v, ok := spec[k]; ok && v != nil && fmt.Sprint(v) == "" {
			bad("spec."+k, "is empty: %s", emptyPart(k, "pilot"))
		}
	}
	for _, root := range []string{"values", "unvalidatedValues"} {
		vals, _ := spec[root].(map[string]any)
		for _, p := range v1alpha1.ImageFields() {
			v, ok := Lookup(vals, strings.Split(p, ".")...)
			if !ok || v == nil {
				continue
			}
			if _, isMap := v.(map[string]any); isMap {
				continue // a shape error, reported by the decoder
			}
			path := "spec." + root + "." + p
			text := fmt.Sprint(v)
			part := p[strings.LastIndexByte(p, '.')+1:]
			if text == "" {
				if mustSet[p] {
					image := "pilot"
					if strings.HasPrefix(p, "ztunnel.") {
						image = "ztunnel"
					}
					bad(path, "is empty: %s", emptyPart(part, image))
				}
				continue
			}
			if msg := badPart(part, text); msg != "" {
				bad(path, "%s", msg)
			}
		}
	}
}

func emptyPart(part, image string) string {
	if part == "hub" {
		return fmt.Sprintf(`images would be "/%s:<tag>", which no runtime can pull; set the registry (e.g. docker.io/istio), or leave the field out for the default`, image)
	}
	return fmt.Sprintf(`images would be "<hub>/%s:", which no runtime can pull; set the tag (e.g. 1.30.0), or leave the field out for the default`, image)
}

// badPart says why text cannot be the image part, or "".
func badPart(part, text string) string {
	switch part {
	case "hub":
		if !hubRE().MatchString(text) {
			return fmt.Sprintf("%q is not an image repository (like docker.io/istio or registry.example.com:5000/mesh)", text)
		}
	case "tag":
		if !isTag(text) {
			return fmt.Sprintf("%q is not an image tag (letters, digits, _ . -, at most 128, not starting with . or -)", text)
		}
	case "variant":
		if !isTag(text) {
			return fmt.Sprintf("%q is not an image variant: it is appended to the tag (letters, digits, _ . -, such as distroless or debug)", text)
		}
	case "image":
		if strings.Contains(text, "/") {
			if _, err := reference.ParseNormalizedNamed(text); err != nil {
				return fmt.Sprintf("%q is not an image reference (like registry.example.com/mesh/pilot:1.30.0): %v", text, err)
			}
		} else if !imageNameRE().MatchString(text) {
			return fmt.Sprintf("%q is not an image name (lowercase letters, digits, . _ -, like pilot), nor a whole reference holding a / (like registry.example.com/mesh/pilot:1.30.0)", text)
		}
	}
	return ""
}
