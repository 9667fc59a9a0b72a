package spec

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protojson"
	meshv1alpha1 "istio.io/api/mesh/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/component"
)

// CompatibilityVersions are the releases whose defaults spec.compatibilityVersion can ask for.
var CompatibilityVersions = []string{"1.25", "1.26", "1.27", "1.28", "1.29", "1.30"}

// The patterns compile on first use: every istioctl command pays for package init.
var (
	// An image repository: an optional registry host[:port], then lowercase path components.
	hubRE = lazyRE(`^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$`)
	// An image tag.
	tagRE = lazyRE(`^[\w][\w.-]{0,127}$`)
	// Gateway names as upstream accepts them.
	gatewayNameRE = lazyRE(`^[a-z0-9.-]{1,254}$`)
	compatRE      = lazyRE(`^[0-9]+\.[0-9]+$`)
)

func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Validate checks what the schema cannot: formats, cross-field rules and meshConfig
// semantics, on the merged tree. Warnings are problems with Warning set.
func Validate(tree map[string]any) v1alpha1.Problems {
	var ps v1alpha1.Problems
	bad := func(path, format string, args ...any) {
		ps = append(ps, v1alpha1.Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	warn := func(path, format string, args ...any) {
		ps = append(ps, v1alpha1.Problem{Path: path, Msg: fmt.Sprintf(format, args...), Warning: true})
	}
	spec, _ := tree["spec"].(map[string]any)
	if spec == nil {
		return v1alpha1.Problems{{Path: "spec", Msg: "missing"}}
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }

	checkImage := func(path string, m map[string]any) {
		if hub := str(m, "hub"); hub != "" && !hubRE().MatchString(hub) {
			bad(path+".hub", "%q is not an image repository (like docker.io/istio or registry.example.com:5000/mesh)", hub)
		}
		if tag := str(m, "tag"); tag != "" && !tagRE().MatchString(tag) {
			bad(path+".tag", "%q is not an image tag (letters, digits, _ . -, at most 128, not starting with . or -)", tag)
		}
	}
	checkImage("spec", spec)
	checkImages(spec, bad)

	// The name and namespace become every installed object's ownership label values: a
	// value the apiserver rejects would fail the install at its first object.
	if md, _ := tree["metadata"].(map[string]any); md != nil {
		if name := str(md, "name"); name != "" && (len(validation.IsDNS1123Subdomain(name)) > 0 || len(validation.IsValidLabelValue(name)) > 0) {
			bad("metadata.name", "%q is not a valid name: use at most 63 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit", name)
		}
		if ns := str(md, "namespace"); ns != "" && !isLabel(ns) {
			bad("metadata.namespace", "%q is not a valid namespace: %s", ns, labelRule)
		}
	}

	if rev := str(spec, "revision"); rev != "" {
		if !isLabel(rev) {
			bad("spec.revision", "%q is not a valid revision: %s", rev, labelRule)
		}
	}
	if ns := str(spec, "namespace"); ns != "" {
		if !isLabel(ns) {
			bad("spec.namespace", "%q is not a valid namespace: %s", ns, labelRule)
		}
	}
	if cv := str(spec, "compatibilityVersion"); cv != "" {
		if !compatRE().MatchString(cv) || !contains(CompatibilityVersions, cv) {
			bad("spec.compatibilityVersion", "%q is not supported; use one of %s", cv, strings.Join(CompatibilityVersions, ", "))
		}
	}

	values, _ := spec["values"].(map[string]any)
	components, _ := spec["components"].(map[string]any)
	for _, name := range []string{"pilot", "cni", "ztunnel", "istiodRemote"} {
		c, _ := components[name].(map[string]any)
		if c == nil {
			continue
		}
		path := "spec.components." + name
		checkImage(path, c)
		if ns := str(c, "namespace"); ns != "" {
			if !isLabel(ns) {
				bad(path+".namespace", "%q is not a valid namespace: %s", ns, labelRule)
			}
		}
		if name == "istiodRemote" && c["enabled"] == true {
			warn(path, "is accepted for compatibility and installs nothing; use profile remote")
		}
	}
	checkReplicas := func(path string, c map[string]any) {
		if v, ok := Lookup(c, "k8s", "replicaCount"); ok && toInt(v) < 0 {
			bad(path+".k8s.replicaCount", "%v is negative: use 0 or more", v)
		}
	}
	if pilot, _ := components["pilot"].(map[string]any); pilot != nil {
		checkReplicas("spec.components.pilot", pilot)
		if replicaSet(pilot) && autoscaleOn(values, "pilot") {
			warn("spec.components.pilot.k8s.replicaCount", "is set while autoscaling is on (values.pilot.autoscaleEnabled); the autoscaler will override it")
		}
	}

	helmEnabled := checkHelmEnabled(tree, values, warn)
	for _, kind := range []string{"ingressGateways", "egressGateways"} {
		list, _ := components[kind].([]any)
		seen := map[string]int{}
		for i, item := range list {
			gw, _ := item.(map[string]any)
			path := fmt.Sprintf("spec.components.%s[%d]", kind, i)
			if gw == nil {
				bad(path, "want an object")
				continue
			}
			name := str(gw, "name")
			switch {
			case name == "":
				bad(path+".name", "a gateway needs a name")
			case !gatewayNameRE().MatchString(name):
				bad(path+".name", "%q is not a valid gateway name: use lowercase letters, digits, '.' and '-'", name)
			case len(validation.IsDNS1035Label(name)) > 0:
				// The name is the gateway's Service's and its pods' app label: the apiserver
				// would reject them half-way through an install.
				bad(path+".name", "%q cannot name the gateway's Service: use at most 63 lowercase letters, digits and '-', starting with a letter", name)
			}
			if j, dup := seen[name]; dup && name != "" {
				bad(path+".name", "%q is already the name of item %d", name, j)
			}
			seen[name] = i
			checkImage(path, gw)
			checkReplicas(path, gw)
			if ns := str(gw, "namespace"); ns != "" {
				if !isLabel(ns) {
					bad(path+".namespace", "%q is not a valid namespace: %s", ns, labelRule)
				}
			}
			valuesKey := "istio-ingressgateway"
			if kind == "egressGateways" {
				valuesKey = "istio-egressgateway"
			}
			if replicaSet(gw) && autoscaleOn(values, "gateways", valuesKey) {
				warn(path+".k8s.replicaCount", "is set while autoscaling is on (values.gateways.%s.autoscaleEnabled); the autoscaler will override it", valuesKey)
			}
			if enabled, ok := gw["enabled"].(bool); ok && !enabled && !helmEnabled[kind] {
				continue
			}
			if t, ok := Lookup(gw, "k8s", "service", "type"); ok && !contains(serviceTypes, fmt.Sprint(t)) {
				bad(path+".k8s.service.type", "%q is not one of %s", t, strings.Join(serviceTypes, ", "))
			}
			runAsRoot, _ := lookupBool(values, "gateways", valuesKey, "runAsRoot")
			ports, _ := Lookup(gw, "k8s", "service", "ports")
			ps = append(ps, checkPorts(path+".k8s.service.ports", ports, runAsRoot, valuesKey)...)
		}
	}
	for _, key := range []string{"istio-ingressgateway", "istio-egressgateway"} {
		runAsRoot, _ := lookupBool(values, "gateways", key, "runAsRoot")
		ports, _ := Lookup(values, "gateways", key, "ports")
		ps = append(ps, checkPorts("spec.values.gateways."+key+".ports", ports, runAsRoot, key)...)
	}

	if mc, ok := spec["meshConfig"].(map[string]any); ok {
		ps = append(ps, checkMeshConfig("spec.meshConfig", mc)...)
	}
	if mc, ok := values["meshConfig"].(map[string]any); ok {
		ps = append(ps, checkMeshConfig("spec.values.meshConfig", mc)...)
	}
	for _, key := range []string{"includeIPRanges", "excludeIPRanges"} {
		if v, ok := Lookup(values, "global", "proxy", key); ok {
			ps = append(ps, checkCIDRs("spec.values.global.proxy."+key, v)...)
		}
	}
	for _, key := range []string{"excludeInboundPorts", "excludeOutboundPorts", "includeInboundPorts"} {
		if v, ok := Lookup(values, "global", "proxy", key); ok {
			ps = append(ps, checkPortList("spec.values.global.proxy."+key, v)...)
		}
	}
	validateExternal(spec, bad, warn)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Path < ps[j].Path })
	return ps
}

// checkHelmEnabled warns of Helm-level enabled values that do not do what they seem to:
// upstream decides what is installed from spec.components, and of the values only a
// gateway's true counts (it turns on every gateway of its list). It returns which gateway
// lists that turns on.
func checkHelmEnabled(tree, values map[string]any, warn func(path, format string, args ...any)) map[string]bool {
	on := map[string]bool{}
	for _, c := range component.All {
		if c.Multi {
			key := strings.TrimPrefix(c.ValuesRoot, "gateways.")
			on[c.SpecKey] = component.HelmEnabled(values, c)
			if v, ok := lookupBool(values, "gateways", key, "enabled"); ok && !v {
				warn("spec.values.gateways."+key+".enabled", "false turns no gateway off (as upstream, only true counts: it turns on every gateway of components.%s); set components.%s[name:...].enabled: false instead", c.SpecKey, c.SpecKey)
			}
		}
	}
	iop, err := typed(tree)
	if err != nil {
		return on
	}
	installed := map[component.Name]bool{}
	for _, i := range component.Instances(iop) {
		installed[i.Name] = true
	}
	for _, c := range []component.Name{component.Pilot, component.Cni} {
		comp, _ := component.Get(c)
		if v, ok := lookupBool(values, comp.ValuesRoot, "enabled"); ok && v != installed[c] {
			state := "not installed"
			if installed[c] {
				state = "installed"
			}
			warn("spec.values."+comp.ValuesRoot+".enabled", "is %v, but %s is %s: what is installed follows components.%s, not this value (as upstream)", v, comp.Title, state, comp.SpecKey)
		}
	}
	return on
}

var serviceTypes = []string{"ClusterIP", "NodePort", "LoadBalancer", "ExternalName"}

const labelRule = "use at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit"

func isLabel(s string) bool { return len(validation.IsDNS1123Label(s)) == 0 }

func replicaSet(component map[string]any) bool {
	_, ok := Lookup(component, "k8s", "replicaCount")
	return ok
}

// autoscaleOn reads <values...>.autoscaleEnabled; the charts default it to true.
func autoscaleOn(values map[string]any, keys ...string) bool {
	v, ok := lookupBool(values, append(keys, "autoscaleEnabled")...)
	return !ok || v
}

func lookupBool(tree map[string]any, keys ...string) (bool, bool) {
	v, ok := Lookup(tree, keys...)
	b, isBool := v.(bool)
	return b, ok && isBool
}

// checkPorts rejects gateway ports that would bind below 1024 inside the pod unless the
// gateway runs as root.
func checkPorts(path string, ports any, runAsRoot bool, valuesKey string) v1alpha1.Problems {
	list, _ := ports.([]any)
	var ps v1alpha1.Problems
	for i, item := range list {
		p, _ := item.(map[string]any)
		if p == nil {
			continue
		}
		port := toInt(p["port"])
		target, hasTarget := p["targetPort"]
		tp := toInt(target)
		// The apiserver would reject the Service half-way through an install.
		if _, named := target.(string); port < 1 || port > 65535 || (hasTarget && !named && (tp < 0 || tp > 65535)) {
			ps = append(ps, v1alpha1.Problem{Path: fmt.Sprintf("%s[%d]", path, i), Msg: fmt.Sprintf(
				"port %v, targetPort %v: a port is a number from 1 to 65535", p["port"], printable(target, hasTarget))})
			continue
		}
		if runAsRoot {
			continue
		}
		if (hasTarget && tp > 0 && tp < 1024) || (!hasTarget && port > 0 && port <= 1024) {
			ps = append(ps, v1alpha1.Problem{Path: fmt.Sprintf("%s[%d]", path, i), Msg: fmt.Sprintf(
				"port %d maps to target port %d, which needs root to bind: set targetPort above 1024, or set values.gateways.%s.runAsRoot=true",
				port, max(tp, port*boolInt(!hasTarget)), valuesKey)})
		}
	}
	return ps
}

func printable(v any, ok bool) any {
	if !ok {
		return "(none)"
	}
	return v
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func toInt(v any) int {
	switch t := v.(type) {
	case int64:
		return int(t)
	case int:
		return t
	case float64:
		return int(t)
	case string:
		n, _ := strconv.Atoi(t)
		return n
	}
	return 0
}

// checkMeshConfig decodes meshConfig with istio.io/api's own decoder (unknown keys allowed,
// as upstream) so type, enum and duration errors are caught.
func checkMeshConfig(path string, mc map[string]any) v1alpha1.Problems {
	b, err := json.Marshal(mc)
	if err != nil {
		return v1alpha1.Problems{{Path: path, Msg: err.Error()}}
	}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, &meshv1alpha1.MeshConfig{}); err != nil {
		msg := strings.ReplaceAll(err.Error(), "\u00a0", " ")
		msg = strings.TrimPrefix(msg, "proto: ")
		return v1alpha1.Problems{{Path: path, Msg: "invalid meshConfig: " + msg}}
	}
	return nil
}

func checkCIDRs(path string, v any) v1alpha1.Problems {
	s, _ := v.(string)
	if s == "" || s == "*" {
		return nil
	}
	var ps v1alpha1.Problems
	for _, c := range strings.Split(s, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		if errs := validation.IsValidCIDR(nil, c); len(errs) > 0 {
			ps = append(ps, v1alpha1.Problem{Path: path, Msg: fmt.Sprintf("%q is not a CIDR (like 10.0.0.0/8)", c)})
		}
	}
	return ps
}

func checkPortList(path string, v any) v1alpha1.Problems {
	s := fmt.Sprint(v)
	if s == "" || s == "*" {
		return nil
	}
	var ps v1alpha1.Problems
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			ps = append(ps, v1alpha1.Problem{Path: path, Msg: fmt.Sprintf("%q is not a port (1-65535)", p)})
		}
	}
	return ps
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
