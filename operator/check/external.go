package check

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/existing"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/readiness"
	"github.com/istioctl-installer/istioctl/operator/skew"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// SectionExternal holds the checks of what an install relies on but does not install.
const SectionExternal = "Relied-on components"

func get(ctx context.Context, env *Env, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	o.SetNamespace(ns)
	o.SetName(name)
	return env.Client.Get(ctx, o)
}

func reliedControlPlane(ctx context.Context, env *Env) []Result {
	d := env.External
	if d == nil || d.ControlPlane == nil {
		return nil
	}
	cp := d.ControlPlane
	sev := Error
	why := "spec.external.controlPlane names it"
	if !cp.Declared {
		// Implied by an upstream-style spec (gateways without istiod): worth a warning only.
		sev = Warning
		why = "this spec installs components that need it and no istiod of its own"
	}
	p, others, err := existing.ControlPlane(ctx, env.Client, cp.Namespace, cp.Revision)
	if err != nil {
		return notChecked(err)
	}
	r := Result{Object: p.Object, Severity: sev, rank: 0}
	if p.Live == nil {
		r.Message = fmt.Sprintf("missing: no istiod of revision %s in namespace %s (%s)", cp.Revision, cp.Namespace, why)
		if len(others) > 0 {
			r.Message += "; it runs " + strings.Join(others, ", ")
		}
		return []Result{r}
	}
	var out []Result
	if !p.Ready {
		r.Message = "not ready: " + p.Status
		out = append(out, r)
	}
	skewed := skew.Proxy(p.Version, d.DataPlaneVersion)
	known, compat := skewed.Known, skewed.Message
	if !skewed.OK {
		out = append(out, Result{Object: p.Object, Severity: sev, Message: "incompatible: " + skewed.String(),
			Hint: "install proxies of istiod's minor version or the one before it (spec.tag), or upgrade istiod first"})
	}
	if len(out) == 0 {
		msg := fmt.Sprintf("revision %s, version %s, ready, managed by %s; %s", p.Revision, p.Version, p.Manager, compat)
		if !known {
			msg = fmt.Sprintf("revision %s, ready, managed by %s; %s", p.Revision, p.Manager, compat)
		}
		out = append(out, Result{Object: p.Object, Passed: true, Message: msg + ". This install wires its components to it and leaves it alone"})
	}
	if ownership.SameOwner(p.Live.GetLabels(), env.IstioNamespace, cp.Revision) {
		out = append(out, Result{Object: p.Object, Severity: Warning,
			Message: "installed by an install spec without metadata.name, with the same ownership labels as this install: installing that spec again would prune what this one installs",
			Hint:    "give the control plane's spec a metadata.name of its own before installing it again"})
	}
	return out
}

func reliedBase(ctx context.Context, env *Env) []Result {
	d := env.External
	if !d.Relies(component.Base) || len(env.BaseCRDs) == 0 {
		return nil
	}
	sev := Warning
	if d.ControlPlane != nil && d.ControlPlane.Declared {
		sev = Error
	}
	crds, err := existing.CRDs(ctx, env.Client, env.BaseCRDs)
	if err != nil {
		return notChecked(err)
	}
	var out []Result
	managers := map[string]bool{}
	var names []string
	for _, p := range crds {
		switch {
		case p.Live == nil:
			out = append(out, Result{Object: p.Object, Severity: sev, rank: 1, Message: "missing: this spec does not install Base and relies on the CRDs being there"})
		case !p.Ready:
			out = append(out, Result{Object: p.Object, Severity: sev, rank: 1, Message: "not established: " + p.Status})
		default:
			if !managers[p.Manager] {
				managers[p.Manager] = true
				names = append(names, p.Manager)
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	return []Result{{Object: "CustomResourceDefinition/*.istio.io", Passed: true, rank: 1,
		Message: fmt.Sprintf("%d CRDs established, managed by %s; this install leaves them alone", len(crds), strings.Join(names, ", "))}}
}

func reliedCNI(ctx context.Context, env *Env) []Result {
	d := env.External
	if !d.Relies(component.Cni) {
		return nil
	}
	p, err := existing.DaemonSet(ctx, env.Client, d.CNINamespace, "istio-cni-node")
	if err != nil {
		return notChecked(err)
	}
	r := Result{Object: p.Object, Severity: Warning}
	switch {
	case p.Live == nil:
		r.Message = "missing: this spec installs components that need the CNI node agent and does not install it"
	case !p.Ready:
		r.Message = "not ready: " + p.Status
	default:
		r.Passed, r.Message = true, fmt.Sprintf("ready, managed by %s; this install leaves it alone", p.Manager)
	}
	return []Result{r}
}

// remoteControlPlane checks the rendered injection wiring against spec.external.remote: the
// injector webhooks call the injection URL, or the istiod Service that points at the
// remote address.
func remoteControlPlane(ctx context.Context, env *Env) []Result {
	d := env.External
	if d == nil || d.Remote == nil || env.Manifests == nil {
		return nil
	}
	addr, url := d.Remote.Address, d.Remote.InjectionURL
	var out []Result
	services := map[string]*unstructured.Unstructured{}
	slices := map[string][]string{}
	for _, o := range env.Expected() {
		switch o.GetKind() {
		case "Service":
			services[o.GetNamespace()+"/"+o.GetName()] = o
		case "EndpointSlice":
			eps, _, _ := unstructured.NestedSlice(o.Object, "endpoints")
			for _, ep := range eps {
				as, _, _ := unstructured.NestedStringSlice(ep.(map[string]any), "addresses")
				key := o.GetNamespace() + "/" + o.GetLabels()["kubernetes.io/service-name"]
				slices[key] = append(slices[key], as...)
			}
		}
	}
	hooks := 0
	for _, o := range env.Expected() {
		if o.GetKind() != "MutatingWebhookConfiguration" {
			continue
		}
		whs, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		for _, w := range whs {
			hooks++
			m := w.(map[string]any)
			r := Result{Object: ref.Of(o).String(), rank: 2}
			gotURL, _, _ := unstructured.NestedString(m, "clientConfig", "url")
			svcMap, hasSvc, _ := unstructured.NestedMap(m, "clientConfig", "service")
			svc := map[string]string{}
			for k, v := range svcMap {
				svc[k] = fmt.Sprint(v)
			}
			switch {
			case url != "" && gotURL != url:
				r.Message = fmt.Sprintf("webhook %v calls %s, not spec.external.remote.injectionURL %s", m["name"], describeCall(gotURL, svc), url)
			case url == "" && !hasSvc:
				r.Message = fmt.Sprintf("webhook %v calls %s, not the istiod Service that points at %s", m["name"], describeCall(gotURL, svc), addr)
			case url == "":
				key := svc["namespace"] + "/" + svc["name"]
				s := services[key]
				var ext string
				if s != nil {
					ext, _, _ = unstructured.NestedString(s.Object, "spec", "externalName")
				}
				switch {
				case s == nil:
					r.Message = fmt.Sprintf("webhook %v calls Service %s, which this spec does not render", m["name"], key)
				case ext != addr && !contains(slices[key], addr):
					r.Message = fmt.Sprintf("webhook %v calls Service %s, which does not point at %s", m["name"], key, addr)
				default:
					r.Passed, r.Message = true, fmt.Sprintf("webhook %v calls Service %s, which points at the remote istiod %s", m["name"], key, addr)
				}
			default:
				r.Passed, r.Message = true, fmt.Sprintf("webhook %v calls %s", m["name"], url)
			}
			out = append(out, r)
		}
	}
	if hooks == 0 {
		out = append(out, Result{Object: "(Cluster)", Message: fmt.Sprintf("this spec renders no sidecar injector for the remote istiod %s: use profile remote", addr)})
	}
	return out
}

func describeCall(url string, svc map[string]string) string {
	if url != "" {
		return url
	}
	if len(svc) > 0 {
		return "Service " + svc["namespace"] + "/" + svc["name"]
	}
	return "nothing"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// caPluggedIn checks the plugged-in CA Secret: the one spec.external.ca declares, or, when
// the spec declares no CA, a cacerts Secret in the namespace of the istiod it installs
// (istiod signs with it whenever it is there), with the same checks and messages.
func caPluggedIn(ctx context.Context, env *Env) []Result {
	d := env.External
	declared := d != nil && d.CA != nil
	if declared && d.CA.Type != v1alpha1.CACacerts {
		return nil
	}
	ns, name := "", v1alpha1.DefaultCASecret
	if declared {
		ns, name = d.CA.Namespace, d.CA.Secret
	} else if ns = istiodNamespace(env); ns == "" {
		return nil // no istiod of this install's: its CA is another install's business
	}
	obj := ref.New("Secret", ns, name).String()
	s, err := get(ctx, env, kube.SecretGVK, ns, name)
	if err != nil {
		return notChecked(err)
	}
	switch {
	case s == nil && declared:
		return []Result{{Object: obj, Message: "missing: spec.external.ca.type is cacerts, and without this Secret istiod signs with a self-signed CA instead"}}
	case s == nil:
		return nil // istiod signs with its own CA, as the spec expects
	}
	hint := ""
	if !declared {
		hint = "the spec declares no CA, but istiod signs with this Secret because it exists: fix it (ca-cert.pem, ca-key.pem, root-cert.pem and cert-chain.pem of one CA) " +
			"and declare it with spec.external.ca.type cacerts, or delete it to let istiod sign with its own CA; see " + DocsURL + "external-components.md"
	}
	data, err := secretData(s)
	if err != nil {
		return []Result{{Object: obj, Message: err.Error(), Hint: hint}}
	}
	findings, ok := inspectCA(data, time.Now())
	var out []Result
	for _, f := range findings {
		out = append(out, Result{Object: obj, Severity: f.Severity, Message: f.Msg, Hint: hint})
	}
	if len(out) == 0 {
		if !declared {
			ok = "istiod will sign with this plugged-in CA (the spec declares none): " + ok
		}
		out = append(out, Result{Object: obj, Passed: true, Message: ok})
	}
	return out
}

// istiodNamespace is where the istiod this run installs (or, verifying from labels, found
// installed) runs; "" when there is none.
func istiodNamespace(env *Env) string {
	for _, m := range env.Manifests {
		if m.Instance.Name == component.Pilot {
			for _, o := range m.Objects {
				if o.GetKind() == "Deployment" {
					return o.GetNamespace()
				}
			}
		}
	}
	if env.Manifests != nil {
		return ""
	}
	for _, o := range env.Installed {
		if o.GetKind() == "Deployment" && o.GetLabels()["operator.istio.io/component"] == string(component.Pilot) {
			return o.GetNamespace()
		}
	}
	return ""
}

// secretData decodes a Secret's data (never printed: only its keys may be named).
func secretData(s *unstructured.Unstructured) (map[string][]byte, error) {
	raw, _, _ := unstructured.NestedStringMap(s.Object, "data")
	out := make(map[string][]byte, len(raw))
	for k, v := range raw {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return nil, fmt.Errorf("key %s is not base64", k)
		}
		out[k] = b
	}
	return out, nil
}

func caExternal(ctx context.Context, env *Env) []Result {
	d := env.External
	if d == nil || d.CA == nil || d.CA.Type != v1alpha1.CAExternal {
		return nil
	}
	if d.CA.Service == nil {
		return []Result{{Object: "(Cluster)", Passed: true, Severity: Info,
			Message: fmt.Sprintf("%s is outside the cluster: not checked from here", d.CA.Address)}}
	}
	return serviceReady(ctx, env, *d.CA.Service, "the external CA address "+d.CA.Address)
}

func caIstiod(ctx context.Context, env *Env) []Result {
	d := env.External
	if d == nil || d.CA == nil || d.CA.Type != v1alpha1.CAIstiod {
		return nil
	}
	obj := ref.New("Secret", d.CA.Namespace, v1alpha1.DefaultCASecret).String()
	s, err := get(ctx, env, kube.SecretGVK, d.CA.Namespace, v1alpha1.DefaultCASecret)
	if err != nil {
		return notChecked(err)
	}
	if s != nil {
		return []Result{{Object: obj, Message: "exists: istiod signs with this plugged-in CA, not a self-signed one, although spec.external.ca.type is istiod"}}
	}
	return []Result{{Object: obj, Passed: true, Message: "absent: istiod signs with its own self-signed CA"}}
}

func prometheus(ctx context.Context, env *Env) []Result {
	d := env.External
	if d == nil || d.Prometheus == nil {
		return nil
	}
	var out []Result
	if s := d.Prometheus.Service; s != nil {
		out = serviceReady(ctx, env, *s, "spec.external.prometheus.service")
	} else {
		out = append(out, Result{Object: "(Cluster)", Passed: true, Severity: Info,
			Message: fmt.Sprintf("%s is outside the cluster: not checked from here", d.Prometheus.URL)})
	}
	return append(out, meshReportsToPrometheus(ctx, env)...)
}

// meshReportsToPrometheus reads the mesh config the spec renders, or else the live one of
// the control plane it relies on, and checks its default metrics providers.
func meshReportsToPrometheus(ctx context.Context, env *Env) []Result {
	d := env.External
	var cm *unstructured.Unstructured
	for _, m := range env.Manifests {
		if m.Instance.Name != component.Pilot {
			continue
		}
		for _, o := range m.Objects {
			if o.GetKind() == "ConfigMap" && strings.HasPrefix(o.GetName(), "istio") {
				if _, ok, _ := unstructured.NestedString(o.Object, "data", "mesh"); ok {
					cm = o
				}
			}
		}
	}
	if cm == nil && d.ControlPlane != nil {
		name := "istio"
		if r := d.ControlPlane.Revision; r != "" && r != "default" {
			name += "-" + r
		}
		live, err := get(ctx, env, kube.ConfigMapGVK, d.ControlPlane.Namespace, name)
		if err != nil {
			return notChecked(err)
		}
		if live == nil {
			return []Result{{Object: ref.New("ConfigMap", d.ControlPlane.Namespace, name).String(),
				Message: "missing: the control plane this install relies on has no mesh config, so nothing says where metrics go"}}
		}
		cm = live
	}
	if cm == nil {
		return []Result{{Object: "(Cluster)", Passed: true, Severity: Info, Message: "the mesh config lives with the remote control plane: not checked from here"}}
	}
	text, _, _ := unstructured.NestedString(cm.Object, "data", "mesh")
	mesh := map[string]any{}
	r := Result{Object: ref.Of(cm).String()}
	if err := yaml.Unmarshal([]byte(text), &mesh); err != nil {
		r.Message = "the mesh config does not parse: " + err.Error()
		return []Result{r}
	}
	metrics, _ := spec.Lookup(mesh, "defaultProviders", "metrics")
	if !spec.MetricsToPrometheus(mesh) {
		r.Message = fmt.Sprintf("the mesh config's defaultProviders.metrics (%v) names no Prometheus provider: the declared Prometheus gets no mesh metrics", metrics)
		return []Result{r}
	}
	r.Passed, r.Message = true, fmt.Sprintf("the mesh reports metrics to Prometheus (defaultProviders.metrics: %v)", metrics)
	return []Result{r}
}

// serviceReady checks that a Service exists, has the port, and has a ready endpoint.
func serviceReady(ctx context.Context, env *Env, sr v1alpha1.ServiceRef, what string) []Result {
	obj := ref.New("Service", sr.Namespace, sr.Name).String()
	svc, err := get(ctx, env, kube.ServiceGVK, sr.Namespace, sr.Name)
	if err != nil {
		return notChecked(err)
	}
	if svc == nil {
		return []Result{{Object: obj, Message: fmt.Sprintf("missing: %s names it", what)}}
	}
	if typ, _, _ := unstructured.NestedString(svc.Object, "spec", "type"); typ == "ExternalName" {
		ext, _, _ := unstructured.NestedString(svc.Object, "spec", "externalName")
		return []Result{{Object: obj, Passed: true, Message: fmt.Sprintf("an ExternalName Service for %s: not checked further", ext)}}
	}
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	found := false
	var have []string
	for _, p := range ports {
		m := p.(map[string]any)
		num := fmt.Sprint(m["port"])
		have = append(have, num)
		if num == sr.Port || m["name"] == sr.Port {
			found = true
		}
	}
	if !found {
		return []Result{{Object: obj, Message: fmt.Sprintf("has no port %s (it has %s), which %s names", sr.Port, strings.Join(have, ", "), what)}}
	}
	list, err := env.lister(ctx)(kube.EndpointSliceGVK, sr.Namespace, "kubernetes.io/service-name="+sr.Name)
	if err != nil {
		return notChecked(err)
	}
	ready := readiness.ReadyEndpoints(list, sr.Namespace, sr.Name)
	if ready == 0 {
		return []Result{{Object: obj, Message: fmt.Sprintf("no ready endpoint: nothing serves %s", what)}}
	}
	return []Result{{Object: obj, Passed: true, Message: fmt.Sprintf("port %s, %s ready endpoint(s)", sr.Port, strconv.Itoa(ready))}}
}
