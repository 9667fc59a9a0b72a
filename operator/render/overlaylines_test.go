package render

import (
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
)

// TestOverlayChanges: the overlay patches a restore adds and drops, one a line.
func TestOverlayChanges(t *testing.T) {
	iop := func(patches ...v1alpha1.Patch) *v1alpha1.IstioOperator {
		k := &v1alpha1.KubernetesResources{Overlays: []v1alpha1.KubernetesOverlay{{Kind: "ClusterRole", Name: "istiod-clusterrole-istio-system", Patches: patches}}}
		return &v1alpha1.IstioOperator{Spec: v1alpha1.IstioOperatorSpec{Components: &v1alpha1.ComponentsSpec{Pilot: &v1alpha1.ComponentSpec{Kubernetes: k}}}}
	}
	keep := v1alpha1.Patch{Path: "metadata.labels.a", Value: "b"}
	widen := v1alpha1.Patch{Path: "rules.[0].verbs", Value: []any{"*"}}
	drop := v1alpha1.Patch{Path: "rules.[1]"}
	for _, tc := range []struct {
		name     string
		from, to *v1alpha1.IstioOperator
		want     string
	}{
		{"the same", iop(keep), iop(keep), ""},
		{"from nothing", nil, iop(widen), `+ Pilot: ClusterRole istiod-clusterrole-istio-system: rules.[0].verbs = ["*"]`},
		{"one added, one gone", iop(keep, drop), iop(keep, widen),
			`- Pilot: ClusterRole istiod-clusterrole-istio-system: rules.[1] = (deleted); + Pilot: ClusterRole istiod-clusterrole-istio-system: rules.[0].verbs = ["*"]`},
	} {
		if got := strings.Join(OverlayChanges(tc.from, tc.to), "; "); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
