package v1alpha1

import (
	"reflect"
	"sort"
	"strings"
	"sync"
)

// Deprecation is a setting upstream istioctl or this tool warns is deprecated, with what
// replaces it. Deprecations is the one table of them: the warnings are made from it, and
// tests tie every source of a warning (the istiod chart's NOTES.txt, the fields the values
// schema marks deprecated, the mesh checks) to it.
type Deprecation struct {
	// Setting is the deprecated setting as users write it (below spec; a proxy metadata key
	// as meshConfig.defaultConfig.proxyMetadata.KEY).
	Setting string
	// Replacement is what to use instead.
	Replacement string
	// Upstream is where upstream istioctl warns, in the pinned istio.io/istio module's
	// source, and by which command; empty when it does not warn.
	Upstream string
	// Ours is where this tool warns.
	Ours string
	// Match is the text that names the setting in a warning (upstream's and ours).
	Match string
	// Generate says upstream's manifest generate prints the warning, so the conformance
	// harness compares it with ours case by case.
	Generate bool
}

// Where warnings come from, in upstream's source (istio.io/istio at hack/upstream.env).
const (
	upstreamMesh  = "pkg/config/validation/agent/validation.go:415-418 (ValidateMeshConfig, on spec.meshConfig and values.meshConfig; logged by manifest generate and install)"
	upstreamMSA   = "pkg/config/validation/agent/validation.go:407-412 (ValidateMeshConfig logs it on its validation scope, which istioctl does not print: no visible warning)"
	upstreamNotes = "manifests/charts/istio-control/istio-discovery/templates/NOTES.txt:25-57 (the chart's WARNING: lines, printed by install via operator/pkg/render/manifest.go:103-107; manifest generate passes no logger)"
	upstreamProto = "" // values_types.proto marks the field deprecated (operator/pkg/apis/values_types.pb.go); upstream does not warn
	oursMesh      = "operator/spec validateMesh (manifest generate, install)"
	oursNotes     = "the istiod chart's NOTES.txt (manifest generate, install)"
	oursSchema    = "operator/api/v1alpha1 decoder: the field's deprecated tag (manifest generate, install, profile dump)"
)

var meshDeprecations = []Deprecation{
	{Setting: "meshConfig.defaultConfig.proxyMetadata.ISTIO_META_DNS_AUTO_ALLOCATE", Match: "ISTIO_META_DNS_AUTO_ALLOCATE",
		Replacement: "DNS auto-allocation v2: values.pilot.env.PILOT_ENABLE_IP_AUTOALLOCATE=true (istio.io: DNS proxying, DNS auto allocation V2)",
		Upstream:    upstreamMesh, Ours: oursMesh, Generate: true},
	{Setting: "meshConfig.defaultConfig.envoyMetricsServiceAddress", Match: "nvoyMetricsServiceAddress",
		Replacement: "meshConfig.defaultConfig.envoyMetricsService", Upstream: upstreamMSA, Ours: oursMesh},
}

// chartDeprecations are the istiod chart's moved settings (values paths), as its NOTES.txt
// lists them; TestChartDeprecations keeps the two the same.
var chartDeprecations = [][2]string{
	{"global.outboundTrafficPolicy", "meshConfig.outboundTrafficPolicy"},
	{"global.certificates", "meshConfig.certificates"},
	{"global.localityLbSetting", "meshConfig.localityLbSetting"},
	{"global.policyCheckFailOpen", "meshConfig.policyCheckFailOpen"},
	{"global.enableTracing", "meshConfig.enableTracing"},
	{"global.proxy.accessLogFormat", "meshConfig.accessLogFormat"},
	{"global.proxy.accessLogFile", "meshConfig.accessLogFile"},
	{"global.proxy.concurrency", "meshConfig.defaultConfig.concurrency"},
	{"global.proxy.envoyAccessLogService", "meshConfig.defaultConfig.envoyAccessLogService"},
	{"global.proxy.envoyAccessLogService.enabled", "meshConfig.enableEnvoyAccessLogService"},
	{"global.proxy.envoyMetricsService", "meshConfig.defaultConfig.envoyMetricsService"},
	{"global.proxy.protocolDetectionTimeout", "meshConfig.protocolDetectionTimeout"},
	{"global.proxy.holdApplicationUntilProxyStarts", "meshConfig.defaultConfig.holdApplicationUntilProxyStarts"},
	{"pilot.ingress", "meshConfig.ingressService, meshConfig.ingressControllerMode and meshConfig.ingressClass"},
	{"global.mtls.enabled", "a PeerAuthentication resource"},
	{"global.mtls.auto", "meshConfig.enableAutoMtls"},
	{"global.tracer.lightstep.address", "meshConfig.defaultConfig.tracing.lightstep.address"},
	{"global.tracer.lightstep.accessToken", "meshConfig.defaultConfig.tracing.lightstep.accessToken"},
	{"global.tracer.zipkin.address", "meshConfig.defaultConfig.tracing.zipkin.address"},
	{"global.tracer.datadog.address", "meshConfig.defaultConfig.tracing.datadog.address"},
	{"global.meshExpansion.enabled", "Gateway and other Istio networking resources"},
	{"istiocoredns.enabled", "DNS capture in the proxy (ISTIO_META_DNS_CAPTURE)"},
}

// Deprecations is the table, in order: the mesh checks, the chart's moved settings, the
// fields the API marks deprecated.
var Deprecations = sync.OnceValue(func() []Deprecation {
	out := append([]Deprecation{}, meshDeprecations...)
	for _, c := range chartDeprecations {
		out = append(out, Deprecation{Setting: "values." + c[0], Replacement: c[1], Upstream: upstreamNotes, Ours: oursNotes, Match: `"` + c[0] + `"`})
	}
	for _, path := range DeprecatedFields() {
		if i := indexOf(out, path); i >= 0 {
			out[i].Ours += "; " + oursSchema // the chart moves it too
			continue
		}
		out = append(out, Deprecation{Setting: path, Replacement: schemaReplacement(path), Upstream: upstreamProto, Ours: oursSchema, Match: "spec." + path + ":"})
	}
	return out
})

func indexOf(rows []Deprecation, setting string) int {
	for i, d := range rows {
		if d.Setting == setting {
			return i
		}
	}
	return -1
}

// DeprecationOf finds the table's row for a setting path (below spec).
func DeprecationOf(setting string) (Deprecation, bool) {
	rows := Deprecations()
	if i := indexOf(rows, setting); i >= 0 {
		return rows[i], true
	}
	return Deprecation{}, false
}

// Warning is the warning's text after the setting's path.
func (d Deprecation) Warning() string {
	if d.Replacement == noReplacement {
		return "is deprecated and has no effect; remove it"
	}
	return "is deprecated; use " + d.Replacement + " instead"
}

// deprecationAt finds the row for a field's path as a decoder sees it (spec.values.x, or
// nested in another document): the path, or its longest tail that is a row.
func deprecationAt(path string) (Deprecation, bool) {
	for p := path; p != ""; {
		if d, ok := DeprecationOf(p); ok {
			return d, true
		}
		_, rest, ok := strings.Cut(p, ".")
		if !ok {
			break
		}
		p = rest
	}
	return Deprecation{}, false
}

// DeprecationsIn lists the settings of the table a warning text names as deprecated.
func DeprecationsIn(warning string) []string {
	if !strings.Contains(warning, "deprecated") {
		return nil
	}
	var out []string
	for _, d := range Deprecations() {
		// the chart's words, or ours on a field ("spec.<setting>: is deprecated")
		if strings.Contains(warning, d.Match) || strings.Contains(warning, "spec."+d.Setting+":") {
			out = append(out, d.Setting)
		}
	}
	return out
}

// DeprecatedFields lists the paths (below spec) of the fields the API marks deprecated.
func DeprecatedFields() []string {
	var out []string
	var walk func(s Schema, path string, depth int)
	walk = func(s Schema, path string, depth int) {
		g, ok := s.(goSchema)
		if !ok || g.Kind() != KindObject || depth > 8 || (g.t.PkgPath() != reflect.TypeOf(Values{}).PkgPath()) {
			return
		}
		for _, name := range g.FieldNames() {
			f, _ := g.Field(name)
			p := join(path, name)
			if f.Deprecated() {
				out = append(out, p)
			}
			for f.Kind() == KindList || f.Kind() == KindMap {
				f = f.Elem()
			}
			walk(f, p, depth+1)
		}
	}
	walk(SpecSchema(), "", 0)
	for i, p := range out {
		out[i] = strings.TrimPrefix(p, "spec.")
	}
	sort.Strings(out)
	return out
}

// schemaReplacement says what replaces a field the API marks deprecated: a component's k8s
// setting for the Kubernetes ones, as upstream's values_types.proto says.
func schemaReplacement(path string) string {
	parts := strings.Split(path, ".")
	field := parts[len(parts)-1]
	component := "the component's"
	switch {
	case len(parts) > 2 && parts[1] == "pilot":
		component = "components.pilot"
	case len(parts) > 3 && parts[1] == "gateways" && parts[2] == "istio-ingressgateway":
		component = "components.ingressGateways[]"
	case len(parts) > 3 && parts[1] == "gateways" && parts[2] == "istio-egressgateway":
		component = "components.egressGateways[]"
	case len(parts) > 2 && parts[1] == "cni":
		component = "components.cni"
	case len(parts) > 2 && parts[1] == "ztunnel":
		component = "components.ztunnel"
	case len(parts) > 2 && parts[1] == "global":
		component = "each component's"
	case path == "components.istiodRemote":
		return "values.istiodRemote.enabled with the remote profile"
	}
	k8s := map[string]string{
		"nodeSelector": "k8s.nodeSelector", "defaultNodeSelector": "k8s.nodeSelector",
		"podAnnotations": "k8s.podAnnotations", "tolerations": "k8s.tolerations", "defaultTolerations": "k8s.tolerations",
		"resources": "k8s.resources", "defaultResources": "k8s.resources", "replicaCount": "k8s.replicaCount",
		"rollingMaxSurge": "k8s.strategy.rollingUpdate.maxSurge", "rollingMaxUnavailable": "k8s.strategy.rollingUpdate.maxUnavailable",
		"cpu": "k8s.hpaSpec.metrics", "memory": "k8s.hpaSpec.metrics",
		"podAntiAffinityLabelSelector": "k8s.affinity.podAntiAffinity", "podAntiAffinityTermLabelSelector": "k8s.affinity.podAntiAffinity",
		"arch": "k8s.affinity.nodeAffinity", "priorityClassName": "k8s.priorityClassName",
	}
	if k, ok := k8s[field]; ok {
		if strings.HasSuffix(component, "'s") {
			return component + " " + k
		}
		return component + "." + k
	}
	if path == "values.cni.logLevel" {
		return "values.global.logging.level (cni:debug)"
	}
	if path == "values.istiodRemote" {
		return "the remote profile (profile: remote) and values.global.remotePilotAddress"
	}
	return noReplacement
}

// noReplacement is the replacement of a setting that no longer does anything.
const noReplacement = "none: remove it (it has no effect)"
