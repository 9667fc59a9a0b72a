package external

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

func resolve(t *testing.T, body string, sets ...string) *Declaration {
	t.Helper()
	opts := spec.Options{Sets: sets}
	if body != "" {
		p := filepath.Join(t.TempDir(), "spec.yaml")
		if err := os.WriteFile(p, []byte("apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		opts.Files = []string{p}
	}
	res, err := spec.Resolve(opts)
	if err != nil {
		t.Fatal(err)
	}
	return FromSpec(res.IOP)
}

func TestExternalDeclaration(t *testing.T) {
	// A profile that installs its own control plane relies on nothing.
	if d := resolve(t, ""); !d.Empty() {
		t.Errorf("default profile: %+v", d)
	}

	// Declared: Base and istiod are relied on, gateways are wired to that control plane.
	d := resolve(t, `spec:
  profile: empty
  external:
    controlPlane: {namespace: mesh-cp, revision: canary}
    ca: {type: cacerts}
    prometheus: {service: "monitoring/prom:web"}
  components:
    ingressGateways: [{name: edge, enabled: true}]
`)
	if !reflect.DeepEqual(d.Relied, []component.Name{component.Base, component.Pilot}) {
		t.Errorf("relied = %v", d.Relied)
	}
	if cp := d.ControlPlane; cp == nil || !cp.Declared || cp.Namespace != "mesh-cp" || cp.Revision != "canary" || cp.Name() != "istiod-canary" {
		t.Errorf("control plane = %+v", cp)
	}
	if ca := d.CA; ca == nil || ca.Secret != "cacerts" || ca.Namespace != "mesh-cp" {
		t.Errorf("CA = %+v (the plugged-in CA lives where istiod runs)", ca)
	}
	if p := d.Prometheus; p == nil || p.Service == nil || p.Service.String() != "monitoring/prom:web" {
		t.Errorf("Prometheus = %+v", p)
	}
	if d.DataPlaneVersion != version.Version { // the default profile's tag
		t.Errorf("data plane version = %q", d.DataPlaneVersion)
	}

	// Implied: gateways without istiod rely on the istiod of the spec's namespace and revision.
	d = resolve(t, "", "components.pilot.enabled=false", "revision=blue")
	if cp := d.ControlPlane; cp == nil || cp.Declared || cp.Namespace != "istio-system" || cp.Revision != "blue" {
		t.Errorf("implied control plane = %+v", cp)
	}
	if !reflect.DeepEqual(d.Relied, []component.Name{component.Pilot}) {
		t.Errorf("relied = %v", d.Relied)
	}

	// ztunnel without CNI and Base relies on both; no control plane without gateways.
	d = resolve(t, "", "profile=ambient", "components.cni.enabled=false", "components.base.enabled=false", "components.pilot.enabled=false", "components.cni.namespace=kube-system")
	if !reflect.DeepEqual(d.Relied, []component.Name{component.Base, component.Cni}) || d.ControlPlane != nil || d.CNINamespace != "kube-system" {
		t.Errorf("ambient without CNI: relied %v, control plane %+v, CNI namespace %q", d.Relied, d.ControlPlane, d.CNINamespace)
	}

	// External CA in the cluster: the Service it names.
	d = resolve(t, "", "external.ca.type=external", "external.ca.address=istio-csr.cert-manager.svc.cluster.local:443")
	if s := d.CA.Service; s == nil || s.Namespace != "cert-manager" || s.Name != "istio-csr" || s.Port != "443" {
		t.Errorf("CA Service = %+v", s)
	}
	d = resolve(t, "", "external.ca.type=external", "external.ca.address=ca.example.com:443")
	if d.CA.Service != nil {
		t.Errorf("an outside address named a Service: %+v", d.CA.Service)
	}
}
