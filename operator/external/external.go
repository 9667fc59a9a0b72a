package external

import (
	"slices"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/component"
)

// Declaration is what one install relies on.
type Declaration struct {
	// ControlPlane is the control plane in this cluster the install relies on; nil when it
	// installs its own (or relies on a remote one).
	ControlPlane *ControlPlane
	// Relied lists the components the install needs and does not install (a disabled
	// parent of an enabled component, or the control plane declared to run already), in
	// dependency order: the install never prunes or uninstalls them.
	Relied []component.Name
	// CNINamespace is where the relied-on CNI runs (when Cni is relied on).
	CNINamespace string
	Remote       *v1alpha1.ExternalRemote
	CA           *CA
	Prometheus   *Prometheus
	// DataPlaneVersion is the version of the proxies the spec installs (its tag).
	DataPlaneVersion string
}

// ControlPlane is an istiod that runs in this cluster already.
type ControlPlane struct {
	Namespace string
	// Revision is "default" for the default revision.
	Revision string
	// Declared says spec.external.controlPlane names it; otherwise the spec implies it (it
	// installs dependents of istiod but not istiod): a missing or unhealthy one is then a
	// warning, not an error, as the spec may be an upstream one that meant nothing more.
	Declared bool
}

// Name is istiod's Deployment name for the revision.
func (c *ControlPlane) Name() string {
	if c.Revision == "" || c.Revision == "default" {
		return "istiod"
	}
	return "istiod-" + c.Revision
}

// CA is the declared certificate authority.
type CA struct {
	Type string
	// Address is the external CA's host:port; Service the in-cluster Service it names, if any.
	Address string
	Service *v1alpha1.ServiceRef
	Signer  string
	// Secret is the plugged-in CA's Secret (type cacerts) in Namespace, where istiod runs.
	Secret    string
	Namespace string
}

// Prometheus is the declared Prometheus: a Service in this cluster or a URL.
type Prometheus struct {
	Service *v1alpha1.ServiceRef
	URL     string
}

// Relies says the install relies on component c without installing it.
func (d *Declaration) Relies(c component.Name) bool {
	return d != nil && slices.Contains(d.Relied, c)
}

// Empty says the install relies on nothing outside itself.
func (d *Declaration) Empty() bool {
	return d == nil || (d.ControlPlane == nil && len(d.Relied) == 0 && d.Remote == nil && d.CA == nil && d.Prometheus == nil)
}

// FromSpec reads what a resolved, validated spec relies on.
func FromSpec(iop *v1alpha1.IstioOperator) *Declaration {
	d := &Declaration{DataPlaneVersion: iop.Spec.Tag}
	if tag, ok := lookupString(iop.Spec.Values, "global", "tag"); ok {
		d.DataPlaneVersion = tag
	}
	insts := component.Instances(iop)
	enabled := map[component.Name]bool{}
	namespaces := map[component.Name]string{}
	for _, i := range insts {
		enabled[i.Name] = true
		namespaces[i.Name] = i.Namespace
	}
	ext := iop.Spec.External
	if ext == nil {
		ext = &v1alpha1.ExternalSpec{}
	}
	relied := map[component.Name]bool{}
	if ext.ControlPlane != nil {
		relied[component.Base], relied[component.Pilot] = true, true
	}
	// A disabled parent of an enabled (or relied-on) component is relied on.
	for changed := true; changed; {
		changed = false
		for _, c := range component.All {
			if !enabled[c.Name] && !relied[c.Name] {
				continue
			}
			for _, p := range c.Parents {
				if !enabled[p] && !relied[p] {
					relied[p], changed = true, true
				}
			}
		}
	}
	for _, c := range component.All {
		if relied[c.Name] {
			d.Relied = append(d.Relied, c.Name)
		}
	}

	istioNS := iop.IstioNamespace()
	rev := v1alpha1.RevisionName(iop.Spec.Revision)
	if ext.ControlPlane != nil || (relied[component.Pilot] && ext.Remote == nil) {
		cp := &ControlPlane{Namespace: istioNS, Revision: rev, Declared: ext.ControlPlane != nil}
		if ext.ControlPlane != nil {
			if ext.ControlPlane.Namespace != "" {
				cp.Namespace = ext.ControlPlane.Namespace
			}
			if ext.ControlPlane.Revision != "" {
				cp.Revision = ext.ControlPlane.Revision
			}
		}
		d.ControlPlane = cp
	}
	if relied[component.Cni] {
		d.CNINamespace = istioNS
		if cs := iop.Spec.Components; cs != nil && cs.Cni != nil && cs.Cni.Namespace != "" {
			d.CNINamespace = cs.Cni.Namespace
		}
	}
	d.Remote = ext.Remote
	if ca := ext.CA; ca != nil {
		c := &CA{Type: ca.Type, Address: ca.Address, Signer: ca.Signer, Secret: ca.SecretName}
		if c.Type == v1alpha1.CACacerts && c.Secret == "" {
			c.Secret = v1alpha1.DefaultCASecret
		}
		c.Namespace = namespaces[component.Pilot]
		if c.Namespace == "" && d.ControlPlane != nil {
			c.Namespace = d.ControlPlane.Namespace
		}
		if c.Namespace == "" {
			c.Namespace = istioNS
		}
		if c.Type == v1alpha1.CAExternal {
			c.Service, _ = v1alpha1.ParseCAAddress(c.Address)
		}
		d.CA = c
	}
	if p := ext.Prometheus; p != nil {
		d.Prometheus = &Prometheus{URL: p.URL}
		if p.Service != "" {
			if ref, err := v1alpha1.ParseServiceRef(p.Service); err == nil {
				d.Prometheus.Service = &ref
			}
		}
	}
	return d
}

func lookupString(m map[string]any, keys ...string) (string, bool) {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		cur = mm[k]
	}
	s, ok := cur.(string)
	return s, ok && s != ""
}
