package render

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/component"
)

// OverlayChanges says how the k8s overlays of to differ from those of from (nil: none), one
// patch a line: "+ Pilot: ClusterRole istiod-clusterrole-istio-system: rules.[0].verbs =
// ["*"]" for a patch to adds, "- ..." for one it no longer makes (a patch without a value
// deletes its path: "(deleted)"). What a restore re-installs shows them before it writes:
// an overlay reaches any field of any object its component renders, RBAC included.
func OverlayChanges(from, to *v1alpha1.IstioOperator) []string {
	was, now := overlayLines(from), overlayLines(to)
	var out []string
	for _, l := range was {
		if !slices.Contains(now, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range now {
		if !slices.Contains(was, l) {
			out = append(out, "+ "+l)
		}
	}
	return out
}

// overlayLines words each overlay patch of iop's enabled components, in install order.
func overlayLines(iop *v1alpha1.IstioOperator) []string {
	if iop == nil {
		return nil
	}
	var out []string
	for _, inst := range component.Instances(iop) {
		if inst.K8s == nil {
			continue
		}
		for _, o := range inst.K8s.Overlays {
			for _, p := range o.Patches {
				value := "(deleted)"
				if p.Value != nil {
					b, err := json.Marshal(p.Value)
					if err != nil {
						b = []byte(fmt.Sprint(p.Value))
					}
					value = string(b)
				}
				out = append(out, fmt.Sprintf("%s: %s %s: %s = %s", inst.Key(), o.Kind, o.Name, p.Path, value))
			}
		}
	}
	return out
}
