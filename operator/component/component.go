// Package component holds the component registry (name, chart, values root, default
// namespace, title, icon) and the dependency graph the installer walks:
// Base → {Pilot, Cni}; Pilot → {IngressGateways, EgressGateways}; Cni → Ztunnel.
package component

import (
	"fmt"
	"sort"
	"strings"

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
	// UpgradeAfter must be healthy before it is upgraded in place, besides its parents:
	// the skew rule upgrade-order (operator/skew.Order) as edges of the install graph.
	UpgradeAfter []Name
	// DefaultOn says the component is installed when the spec does not mention it.
	DefaultOn bool
}

// All lists the components in dependency order.
var All = []Component{
	{Name: Base, SpecKey: "base", Chart: "base", ValuesRoot: "global", Title: "Istio core", Icon: "⛵️", DefaultOn: true},
	{Name: Pilot, SpecKey: "pilot", Chart: "istio-control/istio-discovery", ValuesRoot: "pilot", Title: "Istiod", Icon: "🧠",
		WorkloadKind: "Deployment", WorkloadName: "istiod", Container: "discovery", Parents: []Name{Base}, DefaultOn: true},
	{Name: Cni, SpecKey: "cni", Chart: "istio-cni", ValuesRoot: "cni", Title: "CNI", Icon: "🪢",
		WorkloadKind: "DaemonSet", WorkloadName: "istio-cni-node", Container: "install-cni", Parents: []Name{Base}, UpgradeAfter: []Name{Pilot}},
	{Name: Ztunnel, SpecKey: "ztunnel", Chart: "ztunnel", ValuesRoot: "ztunnel", FlattenValues: true, Title: "Ztunnel", Icon: "🔒",
		WorkloadKind: "DaemonSet", WorkloadName: "ztunnel", Container: "istio-proxy", Parents: []Name{Cni}},
	{Name: IngressGateways, SpecKey: "ingressGateways", Chart: "gateways/istio-ingress", ValuesRoot: "gateways.istio-ingressgateway", Multi: true,
		Title: "Ingress gateways", Icon: "🛬", WorkloadKind: "Deployment", WorkloadName: "istio-ingressgateway", Container: "istio-proxy", Parents: []Name{Pilot}, DefaultOn: true},
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

// Instances lists the enabled instances of a resolved spec, in dependency order, enabled as
// upstream decides:
//   - a component whose spec.components entry is absent (or null) takes its default: on for
//     Base, Pilot and the ingress gateway (one, named istio-ingressgateway), off for the rest;
//   - a present entry is on unless it says enabled: false (an entry without enabled is on);
//     a listed gateway likewise;
//   - the Helm-level values.gateways.istio-ingressgateway.enabled (and its egress twin), when
//     true, turns on every gateway of its list, even one that says enabled: false, and the
//     default one when the list is absent. False, or anything but a boolean, changes nothing.
func Instances(iop *v1alpha1.IstioOperator) []Instance {
	defaultNS := iop.ComponentsNamespace()
	cs := iop.Spec.Components
	if cs == nil {
		cs = &v1alpha1.ComponentsSpec{}
	}
	var out []Instance
	single := func(c Component, spec *v1alpha1.ComponentSpec) {
		if spec == nil {
			if c.DefaultOn {
				out = append(out, Instance{Component: c, Namespace: defaultNS})
			}
			return
		}
		if !orTrue(spec.Enabled) {
			return
		}
		ns := spec.Namespace
		if ns == "" {
			ns = defaultNS
		}
		out = append(out, Instance{Component: c, Namespace: ns, Hub: spec.Hub, Tag: spec.Tag, K8s: spec.Kubernetes})
	}
	for _, c := range All {
		switch {
		case c.Name == Base:
			if cs.Base == nil || orTrue(cs.Base.Enabled) {
				inst := Instance{Component: c, Namespace: defaultNS}
				if cs.Base != nil {
					inst.K8s = cs.Base.Kubernetes
				}
				out = append(out, inst)
			}
		case c.Multi:
			list, _ := cs.Gateways(c.SpecKey)
			alt := HelmEnabled(iop.Spec.Values, c)
			if list == nil {
				if c.DefaultOn || alt {
					out = append(out, Instance{Component: c, InstanceName: c.WorkloadName, Namespace: defaultNS})
				}
				continue
			}
			for _, gw := range list {
				if !alt && !orTrue(gw.Enabled) {
					continue
				}
				ns := gw.Namespace
				if ns == "" {
					ns = defaultNS
				}
				out = append(out, Instance{Component: c, InstanceName: gw.Name, Namespace: ns,
					Hub: gw.Hub, Tag: gw.Tag, Label: gw.Label, K8s: gw.Kubernetes})
			}
		default:
			single(c, cs.Single(c.SpecKey))
		}
	}
	return out
}

func orTrue(b *bool) bool { return b == nil || *b }

// ValuesKey is a gateway kind's key under values.gateways ("istio-ingressgateway"); "" for
// the other components.
func (c Component) ValuesKey() string {
	if !c.Multi {
		return ""
	}
	_, key, _ := strings.Cut(c.ValuesRoot, ".")
	return key
}

// GatewayKinds lists the gateway kinds (the components with a list of instances), in
// dependency order.
func GatewayKinds() []Component {
	var out []Component
	for _, c := range All {
		if c.Multi {
			out = append(out, c)
		}
	}
	return out
}

// HelmEnabled says the component's Helm-level enablement value (values.<root>.enabled of a
// gateway) is true: upstream turns the component on then. Only the gateways have one.
func HelmEnabled(values map[string]any, c Component) bool {
	if !c.Multi {
		return false
	}
	var cur any = values
	for _, k := range append(splitRoot(c.ValuesRoot), "enabled") {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		cur = m[k]
	}
	b, _ := cur.(bool)
	return b
}

// splitRoot splits a dotted values root; a gateway's root holds a dash-named key.
func splitRoot(root string) []string {
	if head, rest, ok := strings.Cut(root, "."); ok {
		return []string{head, rest}
	}
	return []string{root}
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
