package check

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/revision"
	"github.com/istioctl-installer/istioctl/operator/skew"
)

// SectionUpgradeHop holds the checks of the upgrade from what the cluster runs.
const SectionUpgradeHop = "Upgrade"

// hop is one control plane's move to env.Version.
type hop struct {
	object, from string
	inPlace      bool
}

// hops are the control plane upgrades the install makes: in place when its revision runs
// already, else a new revision beside each one that runs; --from-version overrides the
// version read from the cluster.
func hops(ctx context.Context, env *Env) ([]hop, error) {
	cps, err := revision.ControlPlanes(ctx, env.Client, "")
	if err != nil {
		return nil, err
	}
	rev := ownership.Rev(env.Revision)
	var out []hop
	for _, cp := range cps {
		if cp.Revision == rev {
			out = []hop{{object: ref.New("Deployment", cp.Namespace, cp.Name).String(), from: cp.Version, inPlace: true}}
			break
		}
		out = append(out, hop{object: ref.New("Deployment", cp.Namespace, cp.Name).String(), from: cp.Version})
	}
	if env.FromVersion != "" {
		if len(out) == 0 {
			return []hop{{object: "(Cluster)", from: env.FromVersion, inPlace: true}}, nil
		}
		for i := range out {
			out[i].from = env.FromVersion
		}
	}
	return out, nil
}

// upgradeHop is precheck's upgrade-hop and the hop gate: the one place the hop rules
// (skew.Hop) are applied.
func upgradeHop(ctx context.Context, env *Env) []Result {
	var hs []hop
	if h := env.Hop; h != nil {
		hs = []hop{{object: h.Object, from: h.From, inPlace: h.InPlace}}
	} else {
		var err error
		if hs, err = hops(ctx, env); err != nil {
			return notChecked(err)
		}
	}
	if len(hs) == 0 || env.Version == "" || env.External.Relies(component.Pilot) {
		return []Result{{Object: "(Cluster)", Passed: true, Severity: Info, Message: "no control plane to upgrade: a fresh install"}}
	}
	var out []Result
	for _, h := range hs {
		v := skew.Hop(h.from, env.Version, h.inPlace)
		out = append(out, Result{Object: h.object, Passed: v.OK, Message: v.String()})
	}
	return out
}

// versionSkew applies the skew rules to what runs, with the install's revision at
// env.Version: the node agents beside every control plane, and each proxy beside its
// revision's istiod.
func versionSkew(ctx context.Context, env *Env) []Result {
	revs, err := revision.List(ctx, env.Client, env.IstioNamespace)
	if err != nil {
		return notChecked(err)
	}
	target := ownership.Rev(env.Revision)
	cpVersion := func(r *revision.Revision) string {
		if r.Name == target && env.Version != "" && !env.External.Relies(component.Pilot) {
			return env.Version
		}
		return r.Version
	}
	var out []Result
	for _, r := range revs {
		for _, c := range r.Components {
			what := map[string]string{string(component.Cni): "CNI", string(component.Ztunnel): "ztunnel"}[c.Name]
			if what == "" {
				continue
			}
			for _, cp := range revs {
				if cp.Version == "" {
					continue
				}
				v := skew.NodeAgent(what, cp.Version, c.Version)
				if !v.OK {
					out = append(out, Result{Object: c.Object, Message: v.String() + fmt.Sprintf(" (revision %s)", cp.Name)})
				}
			}
		}
		cp := cpVersion(r)
		if cp == "" {
			continue
		}
		for _, w := range r.Workloads {
			byVersion := map[string][]string{}
			for _, p := range w.Pods {
				byVersion[p.Version] = append(byVersion[p.Version], p.Pod)
			}
			for version, pods := range byVersion {
				if v := skew.Proxy(cp, version); !v.OK {
					out = append(out, Result{Object: w.Ref().String(), Severity: Warning,
						Message: fmt.Sprintf("%s (revision %s; pods %s)", v, r.Name, strings.Join(pods, ", "))})
				}
			}
		}
	}
	if len(out) == 0 {
		out = append(out, Result{Object: "(Cluster)", Passed: true, Message: "control planes, node agents and proxies keep the skew rules"})
	}
	return out
}

// compatibilityChanges lists, for every minor the upgrade crosses, the behaviour changes
// compatibilityVersion gates and the value that keeps each.
func compatibilityChanges(ctx context.Context, env *Env) []Result {
	hs, err := hops(ctx, env)
	if err != nil {
		return notChecked(err)
	}
	if len(hs) == 0 || env.Version == "" {
		return nil
	}
	if cv := specCompatibilityVersion(env); cv != "" {
		return []Result{{Object: "(Cluster)", Passed: true, Message: "the spec sets compatibilityVersion " + cv}}
	}
	froms := map[string]bool{}
	var out []Result
	for _, h := range hs {
		if froms[skew.Minor(h.from)] {
			continue
		}
		froms[skew.Minor(h.from)] = true
		changes, err := skew.Changes(h.from, env.Version)
		if err != nil {
			out = append(out, Result{Object: h.object, Message: fmt.Sprintf("from %s: %v", h.from, err)})
		}
		for _, c := range changes {
			out = append(out, Result{Object: h.object, Message: fmt.Sprintf("from %s: %s", h.from, c)})
		}
	}
	if len(out) == 0 {
		out = append(out, Result{Object: "(Cluster)", Passed: true, Message: "the upgrade crosses no behaviour change compatibilityVersion gates"})
	}
	return out
}

// specCompatibilityVersion is the compatibilityVersion the rendered install carries (its
// values ConfigMap), "" without one.
func specCompatibilityVersion(env *Env) string {
	for _, o := range env.Expected() {
		if vals := valuesOf(o); vals != nil {
			if cv, _ := vals["compatibilityVersion"].(string); cv != "" {
				return cv
			}
		}
	}
	return ""
}

// valuesOf reads istiod's values ConfigMap (values, values-<rev>: the merged values the
// chart writes), nil for any other object.
func valuesOf(o *unstructured.Unstructured) map[string]any {
	if o.GetKind() != "ConfigMap" || (o.GetName() != "values" && !strings.HasPrefix(o.GetName(), "values-")) {
		return nil
	}
	raw, _, _ := unstructured.NestedString(o.Object, "data", "merged-values")
	if raw == "" {
		return nil
	}
	vals := map[string]any{}
	if json.Unmarshal([]byte(raw), &vals) != nil {
		return nil
	}
	return vals
}

// defaultRevision compares values.defaultRevision, of the install and of every installed
// revision, with the revision the default tag points at.
func defaultRevision(ctx context.Context, env *Env) []Result {
	tags, err := revision.Tags(ctx, env.Client, env.IstioNamespace)
	if err != nil {
		return notChecked(err)
	}
	tagged := ""
	for _, t := range tags {
		if t.Tag == "default" {
			tagged = t.Revision
		}
	}
	if tagged == "" {
		return []Result{{Object: "(Cluster)", Passed: true, Message: "no default tag"}}
	}
	live, err := env.Client.ListIn(ctx, kube.ConfigMapGVK, "", "app.kubernetes.io/name=istiod")
	if err != nil {
		return notChecked(err)
	}
	var out []Result
	check := func(o *unstructured.Unstructured, where string) {
		vals := valuesOf(o)
		d, _ := vals["defaultRevision"].(string)
		if vals == nil || d == "" {
			return
		}
		r := Result{Object: ref.New("ConfigMap", o.GetNamespace(), o.GetName()).String(), Passed: d == tagged,
			Message: fmt.Sprintf("%s values.defaultRevision is %s, and the default tag points at %s", where, d, tagged)}
		if !r.Passed {
			r.Message = fmt.Sprintf("%s values.defaultRevision is %s, but the default tag points at revision %s", where, d, tagged)
		}
		out = append(out, r)
	}
	for i := range live {
		check(&live[i], "installed:")
	}
	for _, o := range env.Expected() {
		check(o, "this install:")
	}
	if len(out) == 0 {
		out = append(out, Result{Object: "(Cluster)", Passed: true, Message: "no values.defaultRevision set; the default tag points at " + tagged})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Object < out[j].Object })
	return out
}
