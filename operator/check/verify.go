package check

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/objdiff"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/readiness"
	"github.com/istioctl-installer/istioctl/operator/revision"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Sections of verify-install.
const (
	SectionObjects  = "Installed objects"
	SectionDrift    = "Drift from the spec"
	SectionWebhooks = "Webhooks"
	SectionVersion  = "Control plane version"
)

func objectHealth(ctx context.Context, env *Env) []Result {
	var out []Result
	expected := env.Expected()
	lives, errs := env.LiveAll(ctx, expected)
	for i, o := range expected {
		r := Result{Object: ref.Of(o).String(), rank: objectRank(o)}
		live, err := lives[i], errs[i]
		switch {
		case err != nil:
			r.Message = err.Error()
		case live == nil:
			r.Message = "missing"
		default:
			v, err := readiness.CheckWith(live, env.lister(ctx))
			if err != nil {
				r.Message = err.Error()
				break
			}
			r.Passed = v.Status == readiness.Ready
			r.Message = v.Message
			if v.Status == readiness.InProgress {
				r.Message = "not ready: " + v.Message
			}
			if !r.Passed {
				// Why its pods are not ready, which its status cannot say.
				for _, why := range readiness.PodsWhy(live, env.lister(ctx)) {
					r.Message += "; " + why
				}
			}
		}
		out = append(out, r)
	}
	return out
}

func webhooks(env *Env) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range env.Expected() {
		if k := o.GetKind(); k == "MutatingWebhookConfiguration" || k == "ValidatingWebhookConfiguration" {
			out = append(out, o)
		}
	}
	return out
}

func webhookEndpoints(ctx context.Context, env *Env) []Result {
	var out []Result
	seen := map[string]bool{}
	for _, wh := range webhooks(env) {
		hooks, _, _ := unstructured.NestedSlice(wh.Object, "webhooks")
		for _, h := range hooks {
			svc, ok, _ := unstructured.NestedMap(h.(map[string]any), "clientConfig", "service")
			if !ok {
				continue
			}
			key := fmt.Sprintf("Service/%v/%v", svc["namespace"], svc["name"])
			if seen[key] {
				continue
			}
			seen[key] = true
			r := Result{Object: key, rank: 2}
			ns, name := fmt.Sprint(svc["namespace"]), fmt.Sprint(svc["name"])
			slices, err := env.lister(ctx)(kube.EndpointSliceGVK, ns, "kubernetes.io/service-name="+name)
			if err != nil {
				r.Message = err.Error()
				out = append(out, r)
				continue
			}
			ready := readiness.ReadyEndpoints(slices, ns, name)
			r.Passed = ready > 0
			r.Message = fmt.Sprintf("%d ready endpoint(s), serving %s", ready, wh.GetName())
			if !r.Passed {
				r.Message = fmt.Sprintf("no ready endpoint: %s cannot be served", wh.GetName())
			}
			out = append(out, r)
		}
	}
	return out
}

func webhookCABundle(ctx context.Context, env *Env) []Result {
	var out []Result
	for _, wh := range webhooks(env) {
		live, err := env.Live(ctx, wh)
		if err != nil || live == nil {
			continue // object-health reports it
		}
		hooks, _, _ := unstructured.NestedSlice(live.Object, "webhooks")
		var without []string
		for _, h := range hooks {
			m := h.(map[string]any)
			cc, _ := m["clientConfig"].(map[string]any)
			if cc["caBundle"] == nil && cc["url"] == nil {
				without = append(without, fmt.Sprint(m["name"]))
			}
		}
		r := Result{Object: ref.Of(wh).String(), rank: 2, Passed: len(without) == 0, Message: "every webhook has a CA bundle"}
		if !r.Passed {
			r.Message = fmt.Sprintf("no CA bundle yet for %s", strings.Join(without, ", "))
		}
		out = append(out, r)
	}
	return out
}

// driftIgnored are the selectors of an injector a revision tag deactivated (upstream's
// never-match selectors: the default tag serves its namespaces instead). Fields a
// controller took over (ownership.ControllerFields) are left out of the comparison by
// kube.Yield, as the install leaves them.
var driftIgnored = map[string]bool{
	deactivatedInjector + ":webhooks[].namespaceSelector": true,
	deactivatedInjector + ":webhooks[].objectSelector":    true,
}

// serverDefaulted are the fields whose zero the apiserver replaces with a default: a Service
// port's targetPort 0 (rendered, as upstream renders it, for a port without one) becomes
// the port.
var serverDefaulted = map[string]bool{
	"Service:spec.ports[].targetPort": true,
}

// deactivatedInjector is the kind drift compares a deactivated injector as.
const deactivatedInjector = "MutatingWebhookConfiguration(deactivated)"

// deactivated says every webhook of a live injector has the never-match selectors.
func deactivated(live *unstructured.Unstructured) bool {
	hooks, _, _ := unstructured.NestedSlice(live.Object, "webhooks")
	for _, h := range hooks {
		m, _ := h.(map[string]any)
		for _, sel := range []string{"namespaceSelector", "objectSelector"} {
			if v, _, _ := unstructured.NestedString(m, sel, "matchLabels", "istio.io/deactivated"); v != "never-match" {
				return false
			}
		}
	}
	return len(hooks) > 0
}

func drift(ctx context.Context, env *Env) []Result {
	if env.Manifests == nil {
		return nil // without a spec there is nothing to compare with
	}
	var out []Result
	expected := env.Expected()
	lives, errs := env.LiveAll(ctx, expected)
	for i, o := range expected {
		live, err := lives[i], errs[i]
		if err != nil || live == nil {
			continue
		}
		var diffs []string
		kind := o.GetKind()
		if kind == "MutatingWebhookConfiguration" && deactivated(live) {
			kind = deactivatedInjector
		}
		yielded, _ := env.Client.Yield(o, live.GetManagedFields())
		want, have := yielded.Object, live.Object
		if kind == "Secret" {
			want, have = maskSecret(want, have)
		}
		diffInto(kind, "", want, have, &diffs)
		r := Result{Object: ref.Of(o).String(), rank: objectRank(o), Passed: len(diffs) == 0, Message: "as rendered"}
		if !r.Passed {
			r.Message = fmt.Sprintf("%d field(s) differ from the spec", len(diffs))
			r.Diff = strings.Join(diffs, "\n")
		}
		out = append(out, r)
	}
	return out
}

// maskSecret returns copies of a Secret as rendered and as live with every data and
// stringData value masked (objdiff.MaskSecret), "changed" on the live side where the value
// differs, so drift still shows which keys changed and never what they hold.
func maskSecret(want, live map[string]any) (map[string]any, map[string]any) {
	w, l := copyTop(want), copyTop(live)
	objdiff.MaskSecret(w, l, "", " (changed)")
	return w, l
}

func copyTop(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// diffInto lists the fields of want whose live value differs, as unified-diff lines;
// fields only live has (defaults, status, fields others manage) are not drift.
func diffInto(kind, path string, want, live any, out *[]string) {
	if driftIgnored[kind+":"+path] {
		return
	}
	switch w := want.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			*out = append(*out, line(path, want, live))
			return
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			lv, present := l[k]
			if !present {
				// The API drops empty values of optional fields.
				if !spec.IsEmpty(w[k]) && !zero(w[k]) {
					*out = append(*out, line(p, w[k], nil))
				}
				continue
			}
			diffInto(kind, p, w[k], lv, out)
		}
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(w) {
			*out = append(*out, line(path, want, live))
			return
		}
		for i := range w {
			diffInto(kind, path+"[]", w[i], l[i], out)
		}
	case nil:
		// The spec sets nothing here.
	case string, bool, int64, float64:
		if live == nil && zero(want) {
			return // the API drops empty values of optional fields
		}
		if zero(want) && serverDefaulted[kind+":"+path] {
			return
		}
		diffScalar(path, want, live, out)
	default:
		if !sameScalar(want, live) {
			*out = append(*out, line(path, want, live))
		}
	}
}

func zero(v any) bool {
	switch t := v.(type) {
	case string:
		return t == ""
	case bool:
		return !t
	case int64:
		return t == 0
	case float64:
		return t == 0
	}
	return false
}

func diffScalar(path string, want, live any, out *[]string) {
	switch w := want.(type) {
	case string:
		l, ok := live.(string)
		switch {
		case ok && w == l:
		case ok && (strings.Contains(w, "\n") || strings.Contains(l, "\n")):
			*out = append(*out, textDiff(path, w, l))
		case ok && sameQuantity(w, l):
		default:
			*out = append(*out, line(path, want, live))
		}
	default:
		if !sameScalar(want, live) {
			*out = append(*out, line(path, want, live))
		}
	}
}

// sameQuantity says two strings are the same Kubernetes quantity ("2000m" and "2"), as the
// apiserver rewrites them.
func sameQuantity(a, b string) bool {
	qa, errA := resource.ParseQuantity(a)
	qb, errB := resource.ParseQuantity(b)
	return errA == nil && errB == nil && qa.Cmp(qb) == 0
}

// textDiff is a unified diff of a multi-line value (a ConfigMap's mesh config).
func textDiff(path, want, live string) string {
	d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(want + "\n"), B: difflib.SplitLines(live + "\n"),
		FromFile: path + " (spec)", ToFile: path + " (cluster)", Context: 2,
	})
	return strings.TrimRight(d, "\n")
}

func sameScalar(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func line(path string, want, live any) string {
	w, _ := json.Marshal(want)
	l, _ := json.Marshal(live)
	return fmt.Sprintf("- %s: %s\n+ %s: %s", path, w, path, l)
}

func controlPlaneVersion(ctx context.Context, env *Env) []Result {
	if env.Version == "" || env.External.Relies(component.Pilot) {
		return nil // not installed by this spec: relied-control-plane checks its version
	}
	cps, err := revision.ControlPlanes(ctx, env.Client, env.IstioNamespace)
	if err != nil {
		return []Result{{Object: "(Cluster)", Message: err.Error()}}
	}
	rev := ownership.Rev(env.Revision)
	var out []Result
	for _, cp := range cps {
		if cp.Revision != rev {
			continue
		}
		r := Result{Object: ref.New("Deployment", cp.Namespace, cp.Name).String(), Passed: cp.Version == env.Version,
			Message: fmt.Sprintf("version %s (revision %s)", cp.Version, cp.Revision)}
		if !r.Passed {
			r.Message = fmt.Sprintf("runs %s, the spec installs %s", cp.Version, env.Version)
		}
		out = append(out, r)
	}
	return out
}
