package install

import (
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// What an install relies on and does not install is never selected for pruning or removal.
func TestExternalOwnerLeaves(t *testing.T) {
	o := ownership.Owner{Namespace: "istio-system", Leave: []component.Name{component.Base, component.Pilot}}
	const want = "operator.istio.io/component in (Cni,EgressGateways,IngressGateways,Ztunnel)"
	if s := o.Selector(); !strings.Contains(s, want) {
		t.Errorf("prune selector %q lacks %q", s, want)
	}
	if s := o.UninstallSelector(false); !strings.Contains(s, want) {
		t.Errorf("uninstall selector %q lacks %q", s, want)
	}
	if s := o.UninstallSelector(true); s != ownership.LabelComponent {
		t.Errorf("purge selects %q: it removes everything regardless", s)
	}
	all := ownership.Owner{Namespace: "istio-system"}
	if s := all.Selector(); !strings.Contains(s, "in (Base,Cni,EgressGateways,IngressGateways,Pilot,Ztunnel)") {
		t.Errorf("prune selector without Leave: %q", s)
	}
	if s := all.UninstallSelector(false); !strings.Contains(s, "in (Cni,EgressGateways,IngressGateways,Pilot,Ztunnel)") {
		t.Errorf("uninstall selector without Leave: %q", s)
	}
}
