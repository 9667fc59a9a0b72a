package check

import (
	"context"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/revision"
	"github.com/istioctl-installer/istioctl/operator/skew"
)

// Sections of precheck.
const (
	SectionKubernetes  = "Kubernetes"
	SectionPermissions = "Permissions"
	SectionExisting    = "Existing installation"
	SectionNamespaces  = "Namespaces"
	SectionGatewayAPI  = "Gateway API"
)

func kubernetesVersion(ctx context.Context, env *Env) []Result {
	info, err := env.Client.ServerVersion(ctx)
	if err != nil {
		return []Result{{Object: "(Cluster)", Message: err.Error()}}
	}
	have, err := utilversion.ParseGeneric(info.GitVersion)
	if err != nil {
		return []Result{{Object: "(Cluster)", Message: fmt.Sprintf("cannot read version %q: %v", info.GitVersion, err)}}
	}
	min := utilversion.MustParseGeneric(skew.MinKubernetes)
	if have.LessThan(min) {
		return []Result{{Object: "(Cluster)", Message: fmt.Sprintf("The Kubernetes Version %q is lower than the minimum version: %s", info.GitVersion, skew.Minor(skew.MinKubernetes))}}
	}
	out := []Result{{Object: "(Cluster)", Passed: true, Message: fmt.Sprintf("Kubernetes %s (at least %s)", info.GitVersion, skew.MinKubernetes)}}
	// Outside the release's window but above the minimum is a note: untested upstream, not
	// known broken.
	if env.Version != "" {
		if v := skew.Kubernetes(env.Version, info.GitVersion); !v.OK {
			out = append(out, Result{Object: "(Cluster)", Severity: Info, Message: v.String(),
				Hint: "a Kubernetes version outside the window is untested by Istio"})
		}
	}
	return out
}

var ssarGVR = schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectaccessreviews"}

// The cluster lock every writer takes (operator/lock): a Lease it gets, creates and updates.
const (
	lockNamespace = "kube-system"
	lockGroup     = "coordination.k8s.io"
	lockResource  = "leases"
)

// permissions asks, for every kind and namespace the rendered install touches, whether the
// user may create, patch and delete it (prune and uninstall delete); and whether they may
// get, create and update the cluster lock's Lease.
func permissions(ctx context.Context, env *Env) []Result {
	type target struct {
		group, resource, namespace string
		verbs                      []string
	}
	seen := map[string]bool{}
	var targets []target
	add := func(t target) {
		if t.verbs == nil {
			t.verbs = []string{"create", "patch", "delete"}
		}
		if k := t.namespace + "/" + t.group + "/" + t.resource; !seen[k] {
			seen[k] = true
			targets = append(targets, t)
		}
	}
	for _, o := range env.Expected() {
		gvk := o.GroupVersionKind()
		m, err := env.Client.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		resource := strings.ToLower(gvk.Kind) + "s"
		if err == nil {
			resource = m.Resource.Resource
		}
		add(target{group: gvk.Group, resource: resource, namespace: o.GetNamespace()})
	}
	add(target{group: "", resource: "namespaces"})
	add(target{group: lockGroup, resource: lockResource, namespace: lockNamespace, verbs: []string{"get", "create", "update"}})
	sort.Slice(targets, func(i, j int) bool {
		a, b := targets[i], targets[j]
		return a.namespace+a.group+a.resource < b.namespace+b.group+b.resource
	})
	if env.ClusterName != "" {
		// verify-install's link checks read the link Secrets of a spec that names its cluster.
		targets = append(targets, target{group: "", resource: "secrets", namespace: env.IstioNamespace, verbs: []string{"get", "list"}})
	}
	var out []Result
	for _, t := range targets {
		// One result per resource kind for the verbs you have (a line each in the report),
		// one per verb you lack (upstream's message, each a failure of its own).
		var allowedVerbs []string
		where, what := "(Cluster)", t.resource
		if t.namespace != "" {
			where = ref.New("Namespace", "", t.namespace).String()
		}
		if t.group != "" {
			what += "." + t.group
		}
		for _, verb := range t.verbs {
			ssar := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
				"spec": map[string]any{"resourceAttributes": map[string]any{
					"group": t.group, "resource": t.resource, "namespace": t.namespace, "verb": verb,
				}},
			}}
			got, err := env.Client.Dynamic.Resource(ssarGVR).Create(ctx, ssar, metav1.CreateOptions{})
			if err != nil {
				out = append(out, Result{Object: where, Message: fmt.Sprintf("cannot ask whether you may %s %s: %v", verb, what, err)})
				continue
			}
			if allowed, _, _ := unstructured.NestedBool(got.Object, "status", "allowed"); allowed {
				allowedVerbs = append(allowedVerbs, verb)
				continue
			}
			out = append(out, Result{Object: where, Message: fmt.Sprintf("Missing required permission to %s resource %s", verb, what)})
		}
		if len(allowedVerbs) > 0 {
			out = append(out, Result{Object: where, Passed: true, Message: fmt.Sprintf("may %s %s", strings.Join(allowedVerbs, ", "), what)})
		}
	}
	return out
}

func existingControlPlane(ctx context.Context, env *Env) []Result {
	cps, err := revision.ControlPlanes(ctx, env.Client, "")
	if err != nil {
		return notChecked(err)
	}
	if len(cps) == 0 {
		return []Result{{Object: "(Cluster)", Passed: true, Severity: Info, Message: "no Istio control plane installed"}}
	}
	rev := ownership.Rev(env.Revision)
	var out []Result
	for _, cp := range cps {
		r := Result{Object: ref.New("Deployment", cp.Namespace, cp.Name).String(), Passed: true, Severity: Info,
			Message: fmt.Sprintf("revision %s, version %s, %s ready", cp.Revision, cp.Version, cp.Ready)}
		if cp.Revision == rev && env.Version != "" && cp.Version != env.Version && !env.External.Relies(component.Pilot) {
			r.Passed, r.Severity = false, Warning
			r.Message = fmt.Sprintf("revision %s runs %s: this install changes it to %s in place", rev, cp.Version, env.Version)
		}
		out = append(out, r)
	}
	return out
}

func getNamespace(ctx context.Context, env *Env, name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(kube.NamespaceGVK)
	o.SetName(name)
	live, _ := env.Client.Get(ctx, o)
	return live
}

func istioNamespaceInjection(ctx context.Context, env *Env) []Result {
	ns := env.IstioNamespace
	live := getNamespace(ctx, env, ns)
	r := Result{Object: ref.New("Namespace", "", ns).String(), Passed: true, Message: "not labelled for sidecar injection"}
	if live == nil {
		r.Message = "does not exist yet (the install creates it)"
		return []Result{r}
	}
	if v := live.GetLabels()["istio-injection"]; v == "enabled" {
		r.Passed, r.Message = false, "labelled istio-injection=enabled: istiod's own pods would wait for a sidecar from the istiod being installed"
	}
	return []Result{r}
}

func gatewayAPI(ctx context.Context, env *Env) []Result {
	need := map[string][]string{ // CRD -> versions istiod needs served (IST0156), then wants (IST0172)
		"gateways":        {"v1beta1", "v1"},
		"gatewayclasses":  {"v1beta1", "v1"},
		"httproutes":      {"v1beta1", "v1"},
		"referencegrants": {"v1beta1", ""},
		"grpcroutes":      {"", "v1"},
	}
	var names []string
	for n := range need {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Result
	found := 0
	for _, n := range names {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(kube.CRDGVK)
		o.SetName(n + ".gateway.networking.k8s.io")
		live, err := env.Client.Get(ctx, o)
		if err != nil || live == nil {
			continue
		}
		found++
		served := map[string]bool{}
		versions, _, _ := unstructured.NestedSlice(live.Object, "spec", "versions")
		for _, v := range versions {
			m := v.(map[string]any)
			if m["served"] == true {
				served[fmt.Sprint(m["name"])] = true
			}
		}
		r := Result{Object: ref.Of(o).String(), Passed: true, Message: "serves the versions istiod uses"}
		if want := need[n][0]; want != "" && !served[want] {
			r.Passed, r.Message = false, fmt.Sprintf("does not serve %s, which istiod reads", want)
		} else if want := need[n][1]; want != "" && !served[want] {
			r.Passed, r.Severity, r.Code = false, Warning, "IST0172"
			r.Message = fmt.Sprintf("does not serve %s; upgrade Gateway API", want)
		}
		if r.Passed {
			r = gatewayAPIBundle(live, env.Version, r)
		}
		out = append(out, r)
	}
	if found == 0 {
		out = append(out, Result{Object: "(Cluster)", Passed: true, Severity: Info, Message: "Gateway API is not installed (optional)"})
	}
	return out
}
