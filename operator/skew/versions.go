package skew

import (
	"errors"
	"fmt"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// Verdict is a rule applied to versions.
type Verdict struct {
	// OK says the versions keep the rule; it is true when they cannot be compared.
	OK bool `json:"ok"`
	// Known is false when a version does not parse (a dev build, an image by digest).
	Known   bool   `json:"known"`
	Rule    Rule   `json:"rule"`
	Message string `json:"message"`
}

func (v Verdict) String() string {
	if v.OK {
		return v.Message
	}
	return fmt.Sprintf("%s (rule %s: %s; %s)", v.Message, v.Rule.ID, v.Rule.Says, v.Rule.Source)
}

func parse(v string) (*utilversion.Version, error) {
	return utilversion.ParseGeneric(strings.TrimPrefix(v, "v"))
}

// minors is b's minor minus a's, err when either does not parse or their majors differ.
func minors(a, b string) (int, error) {
	va, err := parse(a)
	if err != nil {
		return 0, fmt.Errorf("version %q: %w", a, err)
	}
	vb, err := parse(b)
	if err != nil {
		return 0, fmt.Errorf("version %q: %w", b, err)
	}
	if va.Major() != vb.Major() {
		return 0, fmt.Errorf("%w: %s and %s", errMajor, a, b)
	}
	return int(vb.Minor()) - int(va.Minor()), nil
}

// errMajor says two versions differ in major version: no rule allows that.
var errMajor = errors.New("versions differ in major version")

// unknown is the verdict on versions minors could not compare: broken for versions of
// different majors, kept (unknown) for versions that do not parse.
func unknown(r Rule, err error) Verdict {
	if errors.Is(err, errMajor) {
		return Verdict{Known: true, Rule: r, Message: err.Error()}
	}
	return Verdict{OK: true, Rule: r, Message: "cannot compare: " + err.Error()}
}

// Minor is "1.30" for "1.30.2"; v itself when it does not parse.
func Minor(v string) string {
	p, err := parse(v)
	if err != nil {
		return v
	}
	return fmt.Sprintf("%d.%d", p.Major(), p.Minor())
}

// Hop applies the upgrade rule of its kind (InPlace, or ByRevision when the new control
// plane runs beside the old one) to moving a control plane from one version to another.
func Hop(from, to string, inPlace bool) Verdict {
	r := ByRevision
	kind := "a revision-based upgrade"
	if inPlace {
		r, kind = InPlace, "an in-place upgrade"
	}
	n, err := minors(from, to)
	if err != nil {
		return unknown(r, err)
	}
	v := Verdict{OK: true, Known: true, Rule: r}
	switch {
	case n < 0 && -n > r.Minors:
		v.OK, v.Message = false, fmt.Sprintf("%s from %s down to %s goes back %d minor versions", kind, from, to, -n)
	case n < 0:
		v.Message = fmt.Sprintf("%s from %s down to %s goes back %d minor version", kind, from, to, -n)
	case n > r.Minors:
		v.OK, v.Message = false, fmt.Sprintf("%s from %s to %s crosses %d minor versions; go through %s first", kind, from, to, n, stepsBetween(from, n, r.Minors))
	default:
		v.Message = fmt.Sprintf("%s from %s to %s crosses %d minor version(s)", kind, from, to, n)
	}
	return v
}

// stepsBetween names the intermediate minors a hop of n minors from from needs, each at
// most max apart: "1.30" for 1.29 -> 1.31 in place.
func stepsBetween(from string, n, max int) string {
	f, _ := parse(from)
	var steps []string
	for m := max; m < n; m += max {
		steps = append(steps, fmt.Sprintf("%d.%d", f.Major(), int(f.Minor())+m))
	}
	return strings.Join(steps, ", then ")
}

// Proxy applies ProxySkew to a proxy at version proxy served by a control plane at cp.
func Proxy(cp, proxy string) Verdict {
	n, err := minors(proxy, cp)
	if err != nil {
		return unknown(ProxySkew, err)
	}
	v := Verdict{OK: true, Known: true, Rule: ProxySkew, Message: fmt.Sprintf("istiod %s serves proxies %s", cp, proxy)}
	switch {
	case n < 0:
		v.OK, v.Message = false, fmt.Sprintf("proxies %s would be newer than istiod %s: upgrade the control plane first", proxy, cp)
	case n > ProxySkew.Minors:
		v.OK, v.Message = false, fmt.Sprintf("proxies %s are %d minor versions behind istiod %s: restart their workloads onto newer proxies", proxy, n, cp)
	}
	return v
}

// NodeAgent applies Order and NodeAgentSkew to a node agent (what: "CNI", "ztunnel") at
// version agent beside a control plane at cp.
func NodeAgent(what, cp, agent string) Verdict {
	n, err := minors(agent, cp)
	if err != nil {
		return unknown(NodeAgentSkew, err)
	}
	switch {
	case n < 0:
		return Verdict{Known: true, Rule: Order,
			Message: fmt.Sprintf("%s %s is ahead of the control plane %s: the control plane is upgraded first", what, agent, cp)}
	case n > NodeAgentSkew.Minors:
		return Verdict{Known: true, Rule: NodeAgentSkew,
			Message: fmt.Sprintf("%s %s is %d minor versions behind the control plane %s", what, agent, n, cp)}
	}
	return Verdict{OK: true, Known: true, Rule: NodeAgentSkew, Message: fmt.Sprintf("%s %s works with the control plane %s", what, agent, cp)}
}

// Kubernetes applies KubernetesWindow: Istio istio on Kubernetes kube.
func Kubernetes(istio, kube string) Verdict {
	rel, ok := ReleaseOf(istio)
	if !ok {
		return Verdict{OK: true, Rule: KubernetesWindow, Message: fmt.Sprintf("no Kubernetes window known for Istio %s", istio)}
	}
	lo, err1 := minors(rel.KubernetesMin, kube)
	hi, err2 := minors(kube, rel.KubernetesMax)
	if err1 != nil || err2 != nil {
		return unknown(KubernetesWindow, fmt.Errorf("Kubernetes version %q", kube))
	}
	v := Verdict{OK: lo >= 0 && hi >= 0, Known: true, Rule: KubernetesWindow,
		Message: fmt.Sprintf("Istio %s supports Kubernetes %s to %s; the cluster runs %s", Minor(istio), rel.KubernetesMin, rel.KubernetesMax, Minor(kube))}
	return v
}

// GatewayAPI applies GatewayAPIMinimum to Gateway API CRDs of bundle-version bundle under
// Istio istio.
func GatewayAPI(istio, bundle string) Verdict {
	rel, ok := ReleaseOf(istio)
	if !ok || rel.GatewayAPIMin == "" {
		return Verdict{OK: true, Rule: GatewayAPIMinimum, Message: fmt.Sprintf("Istio %s states no minimum Gateway API version", Minor(istio))}
	}
	b, err := parse(bundle)
	if err != nil {
		return Verdict{Rule: GatewayAPIMinimum, Message: fmt.Sprintf("bundle-version %q does not parse; Istio %s needs %s or later", bundle, Minor(istio), rel.GatewayAPIMin)}
	}
	if b.LessThan(utilversion.MustParseGeneric(rel.GatewayAPIMin)) {
		return Verdict{Known: true, Rule: GatewayAPIMinimum,
			Message: fmt.Sprintf("bundle-version %s is older than v%s, which Istio %s needs", bundle, rel.GatewayAPIMin, Minor(istio))}
	}
	return Verdict{OK: true, Known: true, Rule: GatewayAPIMinimum,
		Message: fmt.Sprintf("bundle-version %s (Istio %s needs v%s or later)", bundle, Minor(istio), rel.GatewayAPIMin)}
}

// Crossed lists the minors an upgrade from -> to enters: "1.30", "1.31" for 1.29.4 ->
// 1.31.0; none for a downgrade or a patch.
func Crossed(from, to string) ([]string, error) {
	n, err := minors(from, to)
	if err != nil {
		return nil, err
	}
	f, _ := parse(from)
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("%d.%d", f.Major(), int(f.Minor())+i))
	}
	return out, nil
}
