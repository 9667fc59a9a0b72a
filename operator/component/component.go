// Package component holds the component registry (name, chart, values root, default
// namespace, title, icon) and the dependency graph the installer walks:
// Base → {Pilot, Cni}; Pilot → {IngressGateways, EgressGateways}; Cni → Ztunnel.
package component

import (
	"fmt"
	"sort"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
)

// Name is a component's name as upstream labels it (operator.istio.io/component).
type Name string

// The components.
const (
	Base            Name = "Base"
	Pilot           Name = "Pilot"
	Cni             Name = "Cni"
	Ztunnel         Name = "Ztunnel"
	IngressGateways Name = "IngressGateways"
	EgressGateways  Name = "EgressGateways"
)

// Component describes one installable component.
type Component struct {
	Name Name
	// SpecKey is its key under spec.components.
	SpecKey string
	// Chart is the chart directory under charts/.
	Chart string
	// ValuesRoot is where its own values live (dotted; "" for none).
	ValuesRoot string
	// FlattenValues says the chart reads ValuesRoot's keys at the top level (ztunnel).
	FlattenValues bool
	// Multi says spec.components holds a list of instances (gateways).
	Multi bool
	// Title and Icon are how progress output names it.
	Title, Icon string
	// Workload is the kind and name of its main resource ("" for Base), and its main
	// container: k8s settings patch them.
	WorkloadKind, WorkloadName, Container string
	// Parents must be healthy before it is applied.
	Parents []Name
}

// All lists the components in dependency order.
var All = []Component{
	{Name: Base, SpecKey: "base", Chart: "base", ValuesRoot: "global", Title: "Istio core", Icon: "⛵️"},
	{Name: Pilot, SpecKey: "pilot", Chart: "istio-control/istio-discovery", ValuesRoot: "pilot", Title: "Istiod", Icon: "🧠",
		WorkloadKind: "Deployment", WorkloadName: "istiod", Container: "discovery", Parents: []Name{Base}},
	{Name: Cni, SpecKey: "cni", Chart: "istio-cni", ValuesRoot: "cni", Title: "CNI", Icon: "🪢",
		WorkloadKind: "DaemonSet", WorkloadName: "istio-cni-node", Container: "install-cni", Parents: []Name{Base}},
	{Name: Ztunnel, SpecKey: "ztunnel", Chart: "ztunnel", ValuesRoot: "ztunnel", FlattenValues: true, Title: "Ztunnel", Icon: "🔒",
		WorkloadKind: "DaemonSet", WorkloadName: "ztunnel", Container: "istio-proxy", Parents: []Name{Cni}},
	{Name: IngressGateways, SpecKey: "ingressGateways", Chart: "gateways/istio-ingress", ValuesRoot: "gateways.istio-ingressgateway", Multi: true,
		Title: "Ingress gateways", Icon: "🛬", WorkloadKind: "Deployment", WorkloadName: "istio-ingressgateway", Container: "istio-proxy", Parents: []Name{Pilot}},
	{Name: EgressGateways, SpecKey: "egressGateways", Chart: "gateways/istio-egress", ValuesRoot: "gateways.istio-egressgateway", Multi: true,
		Title: "Egress gateways", Icon: "🛫", WorkloadKind: "Deployment", WorkloadName: "istio-egressgateway", Container: "istio-proxy", Parents: []Name{Pilot}},
}

// Get returns the component called name.
func Get(name Name) (Component, bool) {
	for _, c := range All {
		if c.Name == name {
			return c, true
		}
	}
	return Component{}, false
}

// Parse accepts a component name case-insensitively, or its spec key.
func Parse(s string) (Name, error) {
	var names []string
	for _, c := range All {
		if equalFold(string(c.Name), s) || equalFold(c.SpecKey, s) {
			return c.Name, nil
		}
		names = append(names, string(c.Name))
	}
	return "", fmt.Errorf("unknown component %q; the components are %v", s, names)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Instance is one enabled component to render: a gateway has one per list entry.
type Instance struct {
	Component
	// InstanceName is the gateway's name ("" for single-instance components).
	InstanceName string
	Namespace    string
	Hub, Tag     string
	Label        map[string]string
	K8s          *v1alpha1.KubernetesResources
}

// ResourceName is the name of the instance's main resource: the gateway's own name, or
// istiod-<revision> for a revisioned Pilot.
func (i Instance) ResourceName(revision string) string {
	switch {
	case i.InstanceName != "":
		return i.InstanceName
	case i.Name == Pilot && v1alpha1.RevisionName(revision) != v1alpha1.DefaultRevision:
		return i.WorkloadName + "-" + revision
	}
	return i.WorkloadName
}

// Key names the instance in messages: "Pilot", "IngressGateways/edge".
func (i Instance) Key() string {
	if i.InstanceName == "" {
		return string(i.Name)
	}
	return string(i.Name) + "/" + i.InstanceName
}

// Instances lists the enabled instances of a resolved spec, in dependency order.
func Instances(iop *v1alpha1.IstioOperator) []Instance {
	defaultNS := iop.ComponentsNamespace()
	cs := iop.Spec.Components
	if cs == nil {
		cs = &v1alpha1.ComponentsSpec{}
	}
	var out []Instance
	single := func(c Component, spec *v1alpha1.ComponentSpec) {
		if spec == nil || spec.Enabled == nil || !*spec.Enabled {
			return
		}
		ns := spec.Namespace
		if ns == "" {
			ns = defaultNS
		}
		out = append(out, Instance{Component: c, Namespace: ns, Hub: spec.Hub, Tag: spec.Tag, K8s: spec.Kubernetes})
	}
	for _, c := range All {
		switch c.Name {
		case Base:
			if cs.Base != nil && cs.Base.Enabled != nil && *cs.Base.Enabled {
				out = append(out, Instance{Component: c, Namespace: defaultNS, K8s: cs.Base.Kubernetes})
			}
		case Pilot:
			single(c, cs.Pilot)
		case Cni:
			single(c, cs.Cni)
		case Ztunnel:
			single(c, cs.Ztunnel)
		case IngressGateways, EgressGateways:
			list := cs.IngressGateways
			if c.Name == EgressGateways {
				list = cs.EgressGateways
			}
			for _, gw := range list {
				if gw.Enabled != nil && !*gw.Enabled {
					continue
				}
				ns := gw.Namespace
				if ns == "" {
					ns = defaultNS
				}
				out = append(out, Instance{Component: c, InstanceName: gw.Name, Namespace: ns,
					Hub: gw.Hub, Tag: gw.Tag, Label: gw.Label, K8s: gw.Kubernetes})
			}
		}
	}
	return out
}

// Names returns the distinct component names of instances, in dependency order.
func Names(insts []Instance) []Name {
	seen := map[Name]bool{}
	var out []Name
	for _, i := range insts {
		if !seen[i.Name] {
			seen[i.Name] = true
			out = append(out, i.Name)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return order(out[a]) < order(out[b]) })
	return out
}

func order(n Name) int {
	for i, c := range All {
		if c.Name == n {
			return i
		}
	}
	return len(All)
}
