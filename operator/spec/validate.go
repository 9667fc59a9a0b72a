package spec

import (
	"encoding/json"
	"fmt"
	"net/netip"
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
	hubRE    = lazyRE(`^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$`)
	compatRE = lazyRE(`^[0-9]+\.[0-9]+$`)
)

// isTag says whether s is an image tag, ^[\w][\w.-]{0,127}$; a loop, not that pattern,
// whose bounded repeat compiles to a program of 128 copies (milliseconds of every
// resolve, most of its allocations).
func isTag(s string) bool {
	if len(s) == 0 || len(s) > 128 || !isWordByte(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isWordByte(c) && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// isGatewayName says whether s is a gateway name as upstream accepts it,
// ^[a-z0-9.-]{1,254}$ (a loop for the reason of isTag).
func isGatewayName(s string) bool {
	if len(s) == 0 || len(s) > 254 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// isWordByte is \w: an ASCII letter, digit or underscore.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// checker is what the rules of one Validate run share: the merged tree's parts and the
// problems found.
type checker struct {
	tree, spec, values, components map[string]any
	ps                             v1alpha1.Problems
}

func (v *checker) bad(path, format string, args ...any) {
	v.ps = append(v.ps, v1alpha1.Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (v *checker) warn(path, format string, args ...any) {
	v.ps = append(v.ps, v1alpha1.Problem{Path: path, Msg: fmt.Sprintf(format, args...), Warning: true})
}

// rules are Validate's checks, each of one part of the spec.
var rules = []func(*checker){
	validateImages,
	validateIdentity,
	validateSingleComponents,
	validateGateways,
	validateMesh,
	func(v *checker) { validateExternal(v.spec, v.bad, v.warn) },
}

// Validate checks what the schema cannot: formats, cross-field rules and meshConfig
// semantics, on the merged tree. Warnings are problems with Warning set.
func Validate(tree map[string]any) v1alpha1.Problems {
	spec, _ := tree["spec"].(map[string]any)
	if spec == nil {
		return v1alpha1.Problems{{Path: "spec", Msg: "missing"}}
	}
	v := &checker{tree: tree, spec: spec}
	v.values, _ = spec["values"].(map[string]any)
	v.components, _ = spec["components"].(map[string]any)
	for _, rule := range rules {
		rule(v)
	}
	sort.SliceStable(v.ps, func(i, j int) bool { return v.ps[i].Path < v.ps[j].Path })
	return v.ps
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

// checkImage checks the hub and tag an object at path sets.
func (v *checker) checkImage(path string, m map[string]any) {
	if hub := str(m, "hub"); hub != "" && !hubRE().MatchString(hub) {
		v.bad(path+".hub", "%q is not an image repository (like docker.io/istio or registry.example.com:5000/mesh)", hub)
	}
	if tag := str(m, "tag"); tag != "" && !isTag(tag) {
		v.bad(path+".tag", "%q is not an image tag (letters, digits, _ . -, at most 128, not starting with . or -)", tag)
	}
}

func (v *checker) checkNamespace(path string, m map[string]any) {
	if ns := str(m, "namespace"); ns != "" && !isLabel(ns) {
		v.bad(path+".namespace", "%q is not a valid namespace: %s", ns, labelRule)
	}
}

func (v *checker) checkReplicas(path string, c map[string]any) {
	if n, ok := Lookup(c, "k8s", "replicaCount"); ok && toInt(n) < 0 {
		v.bad(path+".k8s.replicaCount", "%v is negative: use 0 or more", n)
	}
}

func validateImages(v *checker) {
	v.checkImage("spec", v.spec)
	checkImages(v.spec, v.bad)
}

// validateIdentity: the name and namespace become every installed object's ownership
// label values, and the revision a label and names: a value the apiserver rejects would
// fail the install at its first object.
func validateIdentity(v *checker) {
	if md, _ := v.tree["metadata"].(map[string]any); md != nil {
		if name := str(md, "name"); name != "" && (len(validation.IsDNS1123Subdomain(name)) > 0 || len(validation.IsValidLabelValue(name)) > 0) {
			v.bad("metadata.name", "%q is not a valid name: use at most 63 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit", name)
		}
		if ns := str(md, "namespace"); ns != "" && !isLabel(ns) {
			v.bad("metadata.namespace", "%q is not a valid namespace: %s", ns, labelRule)
		}
	}
	if rev := str(v.spec, "revision"); rev != "" && !isLabel(rev) {
		v.bad("spec.revision", "%q is not a valid revision: %s", rev, labelRule)
	}
	v.checkNamespace("spec", v.spec)
	if cv := str(v.spec, "compatibilityVersion"); cv != "" {
		if !compatRE().MatchString(cv) || !contains(CompatibilityVersions, cv) {
			v.bad("spec.compatibilityVersion", "%q is not supported; use one of %s", cv, strings.Join(CompatibilityVersions, ", "))
		}
	}
}

// compatComponents are spec.components keys accepted for compatibility that install
// nothing.
var compatComponents = []string{"istiodRemote"}

// validateSingleComponents checks the single-instance components of the registry (and the
// compatibility ones).
func validateSingleComponents(v *checker) {
	keys := append([]string(nil), compatComponents...)
	for _, c := range component.All {
		if !c.Multi && c.Name != component.Base {
			keys = append(keys, c.SpecKey)
		}
	}
	for _, name := range keys {
		c, _ := v.components[name].(map[string]any)
		if c == nil {
			continue
		}
		path := "spec.components." + name
		v.checkImage(path, c)
		v.checkNamespace(path, c)
		if contains(compatComponents, name) && c["enabled"] == true {
			v.warn(path, "is accepted for compatibility and installs nothing; use profile remote")
		}
	}
	if pilot, _ := v.components["pilot"].(map[string]any); pilot != nil {
		v.checkReplicas("spec.components.pilot", pilot)
		if replicaSet(pilot) && autoscaleOn(v.values, "pilot") {
			v.warn("spec.components.pilot.k8s.replicaCount", "is set while autoscaling is on (values.pilot.autoscaleEnabled); the autoscaler will override it")
		}
	}
}

// validateGateways checks every gateway kind of the registry: each listed gateway, and the
// Helm-level ports of the kind.
func validateGateways(v *checker) {
	helmEnabled := checkHelmEnabled(v.tree, v.values, v.warn)
	for _, kind := range component.GatewayKinds() {
		list, _ := v.components[kind.SpecKey].([]any)
		seen := map[string]int{}
		for i, item := range list {
			gw, _ := item.(map[string]any)
			path := fmt.Sprintf("spec.components.%s[%d]", kind.SpecKey, i)
			if gw == nil {
				v.bad(path, "want an object")
				continue
			}
			name := str(gw, "name")
			if j, dup := seen[name]; dup && name != "" {
				v.bad(path+".name", "%q is already the name of item %d", name, j)
			}
			seen[name] = i
			v.checkGateway(path, gw, kind, helmEnabled[kind.SpecKey])
		}
		key := kind.ValuesKey()
		runAsRoot, _ := lookupBool(v.values, "gateways", key, "runAsRoot")
		ports, _ := Lookup(v.values, "gateways", key, "ports")
		v.ps = append(v.ps, checkPorts("spec.values.gateways."+key+".ports", ports, runAsRoot, key)...)
	}
}

// checkGateway checks one listed gateway of a kind; helmEnabled says the kind's Helm-level
// value turns it on whatever it says.
func (v *checker) checkGateway(path string, gw map[string]any, kind component.Component, helmEnabled bool) {
	switch name := str(gw, "name"); {
	case name == "":
		v.bad(path+".name", "a gateway needs a name")
	case !isGatewayName(name):
		v.bad(path+".name", "%q is not a valid gateway name: use lowercase letters, digits, '.' and '-'", name)
	case len(validation.IsDNS1035Label(name)) > 0:
		// The name is the gateway's Service's and its pods' app label: the apiserver would
		// reject them half-way through an install.
		v.bad(path+".name", "%q cannot name the gateway's Service: use at most 63 lowercase letters, digits and '-', starting with a letter", name)
	}
	v.checkImage(path, gw)
	v.checkReplicas(path, gw)
	v.checkNamespace(path, gw)
	key := kind.ValuesKey()
	if replicaSet(gw) && autoscaleOn(v.values, "gateways", key) {
		v.warn(path+".k8s.replicaCount", "is set while autoscaling is on (values.gateways.%s.autoscaleEnabled); the autoscaler will override it", key)
	}
	if enabled, ok := gw["enabled"].(bool); ok && !enabled && !helmEnabled {
		return
	}
	if t, ok := Lookup(gw, "k8s", "service", "type"); ok && !contains(serviceTypes, fmt.Sprint(t)) {
		v.bad(path+".k8s.service.type", "%q is not one of %s", t, strings.Join(serviceTypes, ", "))
	}
	runAsRoot, _ := lookupBool(v.values, "gateways", key, "runAsRoot")
	ports, _ := Lookup(gw, "k8s", "service", "ports")
	v.ps = append(v.ps, checkPorts(path+".k8s.service.ports", ports, runAsRoot, key)...)
}

// validateMesh checks meshConfig (at both places it can be set) and the proxy's traffic
// capture settings.
func validateMesh(v *checker) {
	if mc, ok := v.spec["meshConfig"].(map[string]any); ok {
		v.ps = append(v.ps, checkMeshConfig("spec.meshConfig", mc)...)
	}
	if mc, ok := v.values["meshConfig"].(map[string]any); ok {
		v.ps = append(v.ps, checkMeshConfig("spec.values.meshConfig", mc)...)
	}
	// upstream checks both copies of meshConfig for deprecated settings, and so do we
	for _, root := range []string{"spec.meshConfig", "spec.values.meshConfig"} {
		for _, d := range v1alpha1.Deprecations() {
			rel, ok := strings.CutPrefix(d.Setting, "meshConfig.")
			if !ok {
				continue
			}
			keys := append(strings.Split(root, "."), strings.Split(rel, ".")...)
			if val, set := Lookup(v.tree, keys...); set && val != nil && val != "" {
				v.warn(root+"."+rel, "%s", d.Warning())
			}
		}
	}
	for _, key := range []string{"includeIPRanges", "excludeIPRanges"} {
		if val, ok := Lookup(v.values, "global", "proxy", key); ok {
			v.ps = append(v.ps, checkCIDRs("spec.values.global.proxy."+key, val)...)
		}
	}
	for _, key := range []string{"excludeInboundPorts", "excludeOutboundPorts", "includeInboundPorts"} {
		if val, ok := Lookup(v.values, "global", "proxy", key); ok {
			v.ps = append(v.ps, checkPortList("spec.values.global.proxy."+key, val)...)
		}
	}
}

// checkHelmEnabled warns of Helm-level enabled values that do not do what they seem to:
// upstream decides what is installed from spec.components, and of the values only a
// gateway's true counts (it turns on every gateway of its list). It returns which gateway
// lists that turns on.
func checkHelmEnabled(tree, values map[string]any, warn func(path, format string, args ...any)) map[string]bool {
	on := map[string]bool{}
	for _, c := range component.GatewayKinds() {
		key := c.ValuesKey()
		on[c.SpecKey] = component.HelmEnabled(values, c)
		if v, ok := lookupBool(values, "gateways", key, "enabled"); ok && !v {
			warn("spec.values.gateways."+key+".enabled", "false turns no gateway off (as upstream, only true counts: it turns on every gateway of components.%s); set components.%s[name:...].enabled: false instead", c.SpecKey, c.SpecKey)
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

// checkCIDRs reads a comma-separated range list as upstream and the sidecar's iptables
// setup do (netip.ParsePrefix on each item, as written): host bits may be set
// (10.0.0.1/24), a space or an empty item is not a CIDR.
func checkCIDRs(path string, v any) v1alpha1.Problems {
	s, _ := v.(string)
	if s == "" || s == "*" {
		return nil
	}
	var ps v1alpha1.Problems
	for _, c := range strings.Split(s, ",") {
		if _, err := netip.ParsePrefix(c); err != nil {
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
