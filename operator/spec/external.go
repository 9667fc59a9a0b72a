package spec

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
)

// PrometheusProvider is the mesh's built-in Prometheus metrics provider, which a declared
// Prometheus is wired to (meshConfig.defaultProviders.metrics).
const PrometheusProvider = "prometheus"

// ExternalCAEnv is the pilot.env value that makes istiod forward CSRs to Kubernetes.
const ExternalCAEnv = "ISTIOD_RA_KUBERNETES_API"

// translation is one upstream value that spec.external stands for.
type translation struct {
	// path is under spec (values.global.caAddress).
	path []string
	// value is what the declaration sets; nil with unset says the path must stay unset.
	value any
	unset bool
	// from names the declaring field, for messages.
	from string
}

// externalTranslations lists the upstream values spec.external stands for.
func externalTranslations(spec map[string]any) []translation {
	ext, _ := spec["external"].(map[string]any)
	if ext == nil {
		return nil
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	var out []translation
	add := func(from string, value any, path ...string) {
		out = append(out, translation{path: path, value: value, from: from})
	}
	mustBeUnset := func(from string, path ...string) {
		out = append(out, translation{path: path, unset: true, from: from})
	}
	if cp, ok := ext["controlPlane"].(map[string]any); ok {
		if ns := str(cp, "namespace"); ns != "" {
			add("spec.external.controlPlane.namespace", ns, "values", "global", "istioNamespace")
		}
		if rev := str(cp, "revision"); rev != "" && rev != "default" {
			add("spec.external.controlPlane.revision", rev, "revision")
		} else if rev == "default" {
			mustBeUnset("spec.external.controlPlane.revision", "revision")
		}
	}
	if r, ok := ext["remote"].(map[string]any); ok {
		if a := str(r, "address"); a != "" {
			add("spec.external.remote.address", a, "values", "global", "remotePilotAddress")
		}
		if u := str(r, "injectionURL"); u != "" {
			add("spec.external.remote.injectionURL", u, "values", "istiodRemote", "injectionURL")
		}
	}
	if ca, ok := ext["ca"].(map[string]any); ok {
		from := "spec.external.ca"
		switch str(ca, "type") {
		case v1alpha1.CAIstiod, v1alpha1.CACacerts:
			add(from+".type", "istiod", "values", "global", "pilotCertProvider")
			mustBeUnset(from+".type", "values", "global", "caAddress")
			mustBeUnset(from+".type", "values", "pilot", "env", "EXTERNAL_CA")
		case v1alpha1.CAExternal:
			if a := str(ca, "address"); a != "" {
				add(from+".address", a, "values", "global", "caAddress")
			}
			// The external CA signs workload certificates: istiod's own CA server stays off.
			add(from+".type", "false", "values", "pilot", "env", "ENABLE_CA_SERVER")
			mustBeUnset(from+".type", "values", "pilot", "env", "EXTERNAL_CA")
		case v1alpha1.CAKubernetes:
			add(from+".type", ExternalCAEnv, "values", "pilot", "env", "EXTERNAL_CA")
			if s := str(ca, "signer"); s != "" {
				add(from+".signer", s, "values", "pilot", "env", "K8S_SIGNER")
			}
			mustBeUnset(from+".type", "values", "global", "caAddress")
		}
	}
	return out
}

// TranslateExternal writes into tree the upstream values spec.external stands for, so the
// charts see only upstream's values. A value set by a user file or --set (userSet says
// which paths) that says otherwise is a conflict; one set by a profile gives way.
func TranslateExternal(tree map[string]any, userSet func(path string) bool) v1alpha1.Problems {
	spec, _ := tree["spec"].(map[string]any)
	ext, _ := spec["external"].(map[string]any)
	if ext == nil {
		return nil
	}
	var ps v1alpha1.Problems
	conflict := func(path string, have any, t translation, want string) {
		ps = append(ps, v1alpha1.Problem{Path: path, Msg: fmt.Sprintf("is %s, but %s %s: remove one of the two", show(have), t.from, want)})
	}
	for _, t := range externalTranslations(spec) {
		path := "spec." + strings.Join(t.path, ".")
		have, set := Lookup(spec, t.path...)
		if t.unset {
			if set && !IsEmpty(have) && have != "" {
				if userSet(path) {
					conflict(path, have, t, "leaves it unset")
				} else {
					deletePath(spec, t.path)
				}
			}
			continue
		}
		if set && !sameValue(have, t.value) && userSet(path) {
			conflict(path, have, t, "sets "+show(t.value))
			continue
		}
		setPathIn(spec, t.path, t.value)
	}
	if ca, ok := ext["ca"].(map[string]any); ok {
		ps = append(ps, translateCA(spec, ca, userSet)...)
	}
	if p, ok := ext["prometheus"].(map[string]any); ok && !IsEmpty(p) {
		ps = append(ps, translatePrometheus(spec, userSet)...)
	}
	return ps
}

// translateCA adds what takes more than a value: the Kubernetes signer to the signers istiod
// may approve, and a plugged-in CA Secret not named cacerts to istiod's cacerts volume.
func translateCA(spec, ca map[string]any, userSet func(string) bool) v1alpha1.Problems {
	str := func(k string) string { s, _ := ca[k].(string); return s }
	switch str("type") {
	case v1alpha1.CAKubernetes:
		if s := str("signer"); s != "" {
			have, _ := Lookup(spec, "values", "global", "certSigners")
			list, _ := have.([]any)
			if !slices.Contains(list, any(s)) {
				setPathIn(spec, []string{"values", "global", "certSigners"}, append(slices.Clone(list), s))
			}
		}
	case v1alpha1.CACacerts:
		name := str("secretName")
		if name == "" || name == v1alpha1.DefaultCASecret {
			return nil
		}
		// istiod mounts its plugged-in CA from the volume "cacerts": a strategic merge of a
		// volume of that name points it at another Secret.
		vol := map[string]any{"name": "cacerts", "secret": map[string]any{"secretName": name, "optional": true}}
		have, _ := Lookup(spec, "components", "pilot", "k8s", "volumes")
		list, _ := have.([]any)
		for i, v := range list {
			if m, _ := v.(map[string]any); m["name"] == "cacerts" {
				if !reflect.DeepEqual(m, vol) {
					path := fmt.Sprintf("spec.components.pilot.k8s.volumes[%d]", i)
					return v1alpha1.Problems{{Path: path, Msg: fmt.Sprintf("replaces istiod's cacerts volume, but spec.external.ca.secretName says the CA is in Secret %s: remove one of the two", name)}}
				}
				return nil
			}
		}
		setPathIn(spec, []string{"components", "pilot", "k8s", "volumes"}, append(slices.Clone(list), vol))
	}
	return nil
}

// translatePrometheus makes the mesh report metrics to Prometheus: the default metrics
// providers become [prometheus] unless the user chose them, in which case they must include
// a Prometheus provider.
func translatePrometheus(spec map[string]any, userSet func(string) bool) v1alpha1.Problems {
	mesh := EffectiveMeshConfig(spec)
	if metrics, ok := Lookup(mesh, "defaultProviders", "metrics"); ok {
		if MetricsToPrometheus(mesh) {
			return nil
		}
		path := "spec.meshConfig.defaultProviders.metrics"
		if _, inValues := Lookup(spec, "values", "meshConfig", "defaultProviders", "metrics"); inValues {
			path = "spec.values.meshConfig.defaultProviders.metrics"
		}
		return v1alpha1.Problems{{Path: path, Msg: fmt.Sprintf("is %s, which has no Prometheus provider, but spec.external.prometheus says a Prometheus scrapes the mesh: add %q", show(metrics), PrometheusProvider)}}
	}
	setPathIn(spec, []string{"meshConfig", "defaultProviders", "metrics"}, []any{PrometheusProvider})
	return nil
}

// EffectiveMeshConfig is the mesh config the charts see: spec.meshConfig under
// spec.values.meshConfig.
func EffectiveMeshConfig(spec map[string]any) map[string]any {
	top, _ := spec["meshConfig"].(map[string]any)
	vals, _ := Lookup(spec, "values", "meshConfig")
	vm, _ := vals.(map[string]any)
	return Merge(top, vm)
}

// MetricsToPrometheus says the mesh config's default metrics providers include a Prometheus
// one: the built-in "prometheus", or an extension provider of type prometheus.
func MetricsToPrometheus(mesh map[string]any) bool {
	metrics, _ := Lookup(mesh, "defaultProviders", "metrics")
	names, _ := metrics.([]any)
	providers, _ := mesh["extensionProviders"].([]any)
	for _, n := range names {
		defined := false
		for _, p := range providers {
			pm, _ := p.(map[string]any)
			if pm["name"] == n {
				defined = true
				if _, ok := pm["prometheus"]; ok {
					return true
				}
			}
		}
		if !defined && n == PrometheusProvider {
			return true
		}
	}
	return false
}

// validateExternal checks spec.external: formats, what each CA type needs, and that the
// components the spec installs agree with what it says already runs.
func validateExternal(spec map[string]any, bad, warn func(path, format string, args ...any)) {
	ext, _ := spec["external"].(map[string]any)
	if ext == nil {
		return
	}
	cp, hasCP := ext["controlPlane"].(map[string]any)
	if hasCP {
		validateExternalControlPlane(spec, cp, bad)
	}
	if remote, ok := ext["remote"].(map[string]any); ok {
		if hasCP {
			bad("spec.external.remote", "cannot be used with spec.external.controlPlane: the control plane either runs in this cluster or elsewhere")
		}
		validateExternalRemote(spec, remote, bad)
	}
	if ca, ok := ext["ca"].(map[string]any); ok {
		validateExternalCA(spec, ca, bad)
	}
	if p, ok := ext["prometheus"].(map[string]any); ok {
		validateExternalPrometheus(p, bad)
	}
}

// componentEnabled says spec.components.<c>.enabled is true.
func componentEnabled(spec map[string]any, c string) bool {
	v, _ := Lookup(spec, "components", c, "enabled")
	return v == true
}

func validateExternalControlPlane(spec, cp map[string]any, bad func(path, format string, args ...any)) {
	if ns := str(cp, "namespace"); ns != "" && !isLabel(ns) {
		bad("spec.external.controlPlane.namespace", "%q is not a valid namespace: %s", ns, labelRule)
	}
	if rev := str(cp, "revision"); rev != "" && !isLabel(rev) {
		bad("spec.external.controlPlane.revision", "%q is not a valid revision: %s", rev, labelRule)
	}
	for _, c := range []string{"base", "pilot"} {
		if componentEnabled(spec, c) {
			bad("spec.components."+c+".enabled", "is true, but spec.external.controlPlane says the control plane (Base and istiod) already runs: set it to false (or start from profile empty)")
		}
	}
}

func validateExternalRemote(spec, remote map[string]any, bad func(path, format string, args ...any)) {
	pilot, _ := Lookup(spec, "values", "global", "remotePilotAddress")
	switch a := str(remote, "address"); {
	case a == "" && (pilot == nil || pilot == ""):
		bad("spec.external.remote.address", "missing: the remote istiod's IP address or host name (or values.global.remotePilotAddress)")
	case a == "":
	default:
		if err := v1alpha1.CheckRemoteAddress(a); err != nil {
			bad("spec.external.remote.address", "%v", err)
		}
	}
	if cs := str(remote, "controlPlaneClusters"); cs != "" && cs != "*" {
		for _, c := range strings.Split(cs, ",") {
			if errs := validation.IsDNS1123Label(c); len(errs) > 0 {
				bad("spec.external.remote.controlPlaneClusters", "%q is not a cluster ID (a DNS-1123 label): %s; list them comma-separated, or \"*\" for any", c, strings.Join(errs, "; "))
			}
		}
	}
	if u := str(remote, "injectionURL"); u != "" {
		if err := v1alpha1.CheckURL(u, true); err != nil {
			bad("spec.external.remote.injectionURL", "%v", err)
		}
	}
	profile, _ := Lookup(spec, "values", "profile")
	remoteOn, _ := Lookup(spec, "values", "istiodRemote", "enabled")
	if profile != "remote" && remoteOn != true {
		bad("spec.external.remote", "needs a remote configuration: use profile remote (or set values.istiodRemote.enabled=true)")
	}
}

func validateExternalCA(spec, ca map[string]any, bad func(path, format string, args ...any)) {
	typ := str(ca, "type")
	if typ == "" {
		bad("spec.external.ca.type", "missing: one of istiod, cacerts, external, kubernetes")
	}
	only := func(field, forType string) {
		if str(ca, field) != "" && typ != forType && typ != "" {
			bad("spec.external.ca."+field, "is only used with type %s (the type is %s)", forType, typ)
		}
	}
	only("address", v1alpha1.CAExternal)
	only("signer", v1alpha1.CAKubernetes)
	only("secretName", v1alpha1.CACacerts)
	switch typ {
	case v1alpha1.CAExternal:
		if a := str(ca, "address"); a == "" {
			bad("spec.external.ca.address", "missing: type external needs the CA's host:port (e.g. cert-manager-istio-csr.cert-manager.svc:443)")
		} else if _, err := v1alpha1.ParseCAAddress(a); err != nil {
			bad("spec.external.ca.address", "%v", err)
		}
	case v1alpha1.CAKubernetes:
		if s := str(ca, "signer"); s == "" {
			bad("spec.external.ca.signer", "missing: type kubernetes needs the signer name (e.g. example.com/istio)")
		} else if domain, _, ok := strings.Cut(s, "/"); !ok || len(validation.IsDNS1123Subdomain(domain)) > 0 {
			bad("spec.external.ca.signer", "%q is not a signer name: want <domain>/<name>, e.g. example.com/istio", s)
		}
	case v1alpha1.CACacerts:
		if n := str(ca, "secretName"); n != "" {
			if len(validation.IsDNS1123Subdomain(n)) > 0 {
				bad("spec.external.ca.secretName", "%q is not a valid Secret name", n)
			} else if n != v1alpha1.DefaultCASecret && !componentEnabled(spec, "pilot") {
				bad("spec.external.ca.secretName", "%q: only an istiod this spec installs can be pointed at a Secret not named %s", n, v1alpha1.DefaultCASecret)
			}
		}
	}
}

func validateExternalPrometheus(p map[string]any, bad func(path, format string, args ...any)) {
	svc, url := str(p, "service"), str(p, "url")
	switch {
	case svc == "" && url == "":
		bad("spec.external.prometheus", "set service (namespace/name:port) or url")
	case svc != "" && url != "":
		bad("spec.external.prometheus", "set service or url, not both")
	case svc != "":
		if _, err := v1alpha1.ParseServiceRef(svc); err != nil {
			bad("spec.external.prometheus.service", "%v", err)
		}
	default:
		if err := v1alpha1.CheckURL(url, false); err != nil {
			bad("spec.external.prometheus.url", "%v", err)
		}
	}
}

func show(v any) string {
	switch t := v.(type) {
	case string:
		return fmt.Sprintf("%q", t)
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = show(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

func sameValue(a, b any) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

func setPathIn(m map[string]any, keys []string, v any) {
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = v
}

func deletePath(m map[string]any, keys []string) {
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, keys[len(keys)-1])
}
