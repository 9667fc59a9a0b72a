package render

import (
	"fmt"

	"github.com/distribution/reference"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checkImages makes sure every container image a rendered workload would run is a valid
// reference. The spec's image fields are checked where they are set (spec.Validate); this
// catches what else can make one: k8s settings and overlays, or a chart's own defaults.
func checkImages(objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		podSpec, ok := PodSpecPath(o.GetKind())
		if !ok {
			continue
		}
		for _, list := range []string{"initContainers", "containers"} {
			cs, _, _ := unstructured.NestedSlice(o.Object, append(podSpec, list)...)
			for _, c := range cs {
				m, _ := c.(map[string]any)
				img, _ := m["image"].(string)
				if _, err := reference.ParseNormalizedNamed(img); err != nil {
					return fmt.Errorf("%s %s, container %v: image %q is not a valid image reference (%v): check the hub, tag, image and variant values of the component, and its k8s overlays",
						o.GetKind(), o.GetName(), m["name"], img, err)
				}
			}
		}
	}
	return nil
}

// PodSpecPath is where an object of kind holds its pod spec: a Pod's own spec, a
// workload's template; false for a kind that runs no containers.
func PodSpecPath(kind string) ([]string, bool) {
	switch kind {
	case "Pod":
		return []string{"spec"}, true
	case "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job":
		return []string{"spec", "template", "spec"}, true
	}
	return nil, false
}
