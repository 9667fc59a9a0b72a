package check

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/skew"
)

var pdbGVK = schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}

// pdbBlocksDrain finds PodDisruptionBudgets that let no pod of their workload go: a
// minAvailable of all the replicas (or 100%), or a maxUnavailable of 0. A node drain (and
// so a cluster upgrade) waits on them forever (upstream #12602).
func pdbBlocksDrain(ctx context.Context, env *Env) []Result {
	pdbs, err := env.Client.List(ctx, pdbGVK, "")
	if err != nil {
		return notChecked(err)
	}
	var out []Result
	deployments := map[string][]unstructured.Unstructured{} // by namespace: one list each
	for i := range pdbs {
		p := &pdbs[i]
		sel, err := pdbSelector(p)
		if err != nil || sel.Empty() {
			continue
		}
		deps, ok := deployments[p.GetNamespace()]
		if !ok {
			if deps, err = env.Client.ListIn(ctx, kube.DeploymentGVK, p.GetNamespace(), ""); err != nil {
				return notChecked(err)
			}
			deployments[p.GetNamespace()] = deps
		}
		for j := range deps {
			d := &deps[j]
			tmpl, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
			if !sel.Matches(labels.Set(tmpl)) {
				continue
			}
			replicas, ok, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
			if !ok {
				replicas = 1
			}
			if why := blocks(p, int(replicas)); why != "" {
				out = append(out, Result{Object: ref.New("PodDisruptionBudget", p.GetNamespace(), p.GetName()).String(),
					Message: fmt.Sprintf("%s of Deployment %s (%d replicas): a node drain can evict none of its pods", why, d.GetName(), replicas)})
			}
		}
	}
	if len(out) == 0 {
		out = append(out, Result{Object: "(Cluster)", Passed: true, Message: "no PodDisruptionBudget blocks node drains"})
	}
	return out
}

func pdbSelector(p *unstructured.Unstructured) (labels.Selector, error) {
	m, _, _ := unstructured.NestedStringMap(p.Object, "spec", "selector", "matchLabels")
	if len(m) == 0 {
		return labels.Nothing(), nil
	}
	return labels.SelectorFromSet(m), nil
}

// blocks says why pdb lets no pod of replicas go, "" when it lets one go.
func blocks(pdb *unstructured.Unstructured, replicas int) string {
	spec, _, _ := unstructured.NestedMap(pdb.Object, "spec")
	if v, ok := spec["minAvailable"]; ok {
		n, err := intstr.GetScaledValueFromIntOrPercent(intOrString(v), replicas, true)
		if err == nil && n >= replicas {
			return fmt.Sprintf("minAvailable %v covers all the replicas", v)
		}
	}
	if v, ok := spec["maxUnavailable"]; ok {
		n, err := intstr.GetScaledValueFromIntOrPercent(intOrString(v), replicas, true)
		if err == nil && n == 0 {
			return fmt.Sprintf("maxUnavailable %v", v)
		}
	}
	return ""
}

func intOrString(v any) *intstr.IntOrString {
	switch t := v.(type) {
	case int64:
		x := intstr.FromInt32(int32(t))
		return &x
	case float64:
		x := intstr.FromInt32(int32(t))
		return &x
	case string:
		x := intstr.FromString(t)
		return &x
	}
	x := intstr.FromString(fmt.Sprint(v))
	return &x
}

// nativeSidecarWebhooks lists the pod-mutating webhooks that are not Istio's when the
// install runs native sidecars (the default since 1.27: istio-proxy is an init container),
// which other webhooks and controllers have broken on (kubeflow, vertica, gcs-fuse).
func nativeSidecarWebhooks(ctx context.Context, env *Env) []Result {
	if !nativeSidecars(env) {
		return []Result{{Object: "(Cluster)", Passed: true, Message: "native sidecars are off (ENABLE_NATIVE_SIDECARS=false)"}}
	}
	hooks, err := env.Client.List(ctx, kube.MutatingWebhookGVK, "")
	if err != nil {
		return notChecked(err)
	}
	var out []Result
	for i := range hooks {
		w := &hooks[i]
		l := w.GetLabels()
		if l["app"] == "sidecar-injector" || l[ownership.LabelRevision] != "" || l[ownership.LabelManaged] != "" {
			continue // Istio's own injectors and tags
		}
		var names []string
		items, _, _ := unstructured.NestedSlice(w.Object, "webhooks")
		for _, it := range items {
			m, _ := it.(map[string]any)
			if mutatesPods(m) {
				names = append(names, fmt.Sprint(m["name"]))
			}
		}
		if len(names) > 0 {
			out = append(out, Result{Object: ref.New("MutatingWebhookConfiguration", "", w.GetName()).String(),
				Message: fmt.Sprintf("webhook(s) %s also mutate pods: with native sidecars istio-proxy is an init container they may not expect", strings.Join(names, ", "))})
		}
	}
	if len(out) == 0 {
		out = append(out, Result{Object: "(Cluster)", Passed: true, Message: "no other webhook mutates pods"})
	}
	return out
}

// nativeSidecars says whether the rendered istiod runs with native sidecars: on unless its
// ENABLE_NATIVE_SIDECARS is "false".
func nativeSidecars(env *Env) bool {
	for _, o := range env.Expected() {
		if o.GetKind() != "Deployment" || o.GetLabels()["app"] != "istiod" {
			continue
		}
		ctrs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range ctrs {
			m, _ := c.(map[string]any)
			envs, _ := m["env"].([]any)
			for _, e := range envs {
				em, _ := e.(map[string]any)
				if em["name"] == "ENABLE_NATIVE_SIDECARS" && em["value"] == "false" {
					return false
				}
			}
		}
	}
	return true
}

func mutatesPods(hook map[string]any) bool {
	rules, _ := hook["rules"].([]any)
	for _, r := range rules {
		m, _ := r.(map[string]any)
		res, _ := m["resources"].([]any)
		ops, _ := m["operations"].([]any)
		pods, create := false, false
		for _, x := range res {
			pods = pods || x == "pods" || x == "*" || x == "*/*"
		}
		for _, x := range ops {
			create = create || x == "CREATE" || x == "*"
		}
		if pods && create {
			return true
		}
	}
	return false
}

// The annotations Gateway API's CRDs carry.
const (
	annotationBundleVersion = "gateway.networking.k8s.io/bundle-version"
	annotationChannel       = "gateway.networking.k8s.io/channel"
)

// gatewayAPIBundle applies skew.GatewayAPIMinimum to a Gateway API CRD that serves the
// versions istiod reads: its bundle-version must be recent enough for the Istio version
// installed (1.30 silently ignores TLSRoute and ReferenceGrant of older bundles). A
// warning, as upstream's analyzer (IST0176) is.
func gatewayAPIBundle(crd *unstructured.Unstructured, version string, r Result) Result {
	if version == "" {
		return r
	}
	a := crd.GetAnnotations()
	bundle, channel := a[annotationBundleVersion], a[annotationChannel]
	if channel == "" {
		channel = "unknown"
	}
	v := skew.GatewayAPI(version, bundle)
	if bundle == "" && !v.OK {
		v.Message = fmt.Sprintf("carries no %s annotation: cannot tell whether it is v%s or later, which Istio %s needs", annotationBundleVersion, minGatewayAPI(version), skew.Minor(version))
	}
	if v.OK {
		if bundle != "" {
			r.Message += fmt.Sprintf("; bundle-version %s, %s channel", bundle, channel)
		}
		return r
	}
	return Result{Object: r.Object, Severity: Warning, Code: "IST0176",
		Message: fmt.Sprintf("%s (%s channel)", v, channel),
		Hint:    fmt.Sprintf("install Gateway API v%s or later (kubectl apply --server-side -f its standard-install.yaml)", minGatewayAPI(version))}
}

func minGatewayAPI(version string) string {
	rel, _ := skew.ReleaseOf(version)
	return rel.GatewayAPIMin
}
