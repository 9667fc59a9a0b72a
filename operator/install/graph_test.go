package install

import (
	"fmt"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/render"
)

// TestNeedsUpgradeOrder: an upgrade adds the skew rule upgrade-order's edges (CNI after the
// control plane) to the parents, only for components the run installs.
func TestNeedsUpgradeOrder(t *testing.T) {
	manifest := func(n component.Name) render.Manifest {
		c, _ := component.Get(n)
		return render.Manifest{Instance: component.Instance{Component: c}}
	}
	ambient := []render.Manifest{manifest(component.Base), manifest(component.Pilot), manifest(component.Cni), manifest(component.Ztunnel)}
	for _, tc := range []struct {
		name      string
		manifests []render.Manifest
		upgrade   bool
		want      string
	}{
		{"install", ambient, false, "[[] [Base] [Base] [Cni]]"},
		{"upgrade", ambient, true, "[[] [Base] [Base Pilot] [Cni]]"},
		{"upgrade without the control plane", []render.Manifest{manifest(component.Base), manifest(component.Cni), manifest(component.Ztunnel)}, true, "[[] [Base] [Cni]]"},
	} {
		if got := fmt.Sprint(Needs(tc.manifests, tc.upgrade)); got != tc.want {
			t.Errorf("%s: needs %s, want %s", tc.name, got, tc.want)
		}
	}
}
