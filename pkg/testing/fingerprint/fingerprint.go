// Package fingerprint reduces rendered Kubernetes objects to the facts that must match
// upstream istioctl's render (object identities, images, container args, env var names,
// ports, probes, RBAC rules, webhook rules and selectors, ownership labels), so tests can
// compare our charts' output with upstream's without keeping upstream's manifests.
package fingerprint

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
)

// Labels compared; chart version labels differ by design (our charts are versioned 1.30.0).
var comparedLabels = []string{
	"app", "istio", "istio.io/rev", "operator.istio.io/component", "install.operator.istio.io/owning-resource",
	"app.kubernetes.io/name", "app.kubernetes.io/part-of", "istio.io/tag",
}

// Object is the fingerprint of one object.
type Object struct {
	Labels     map[string]string    `json:"labels,omitempty"`
	Containers map[string]Container `json:"containers,omitempty"`
	Volumes    []string             `json:"volumes,omitempty"`
	Ports      []string             `json:"ports,omitempty"`
	Rules      []string             `json:"rules,omitempty"`
	Webhooks   []string             `json:"webhooks,omitempty"`
	Replicas   any                  `json:"replicas,omitempty"`
	// Digest is set by Deep only: the hash of the whole normalised object.
	Digest string `json:"digest,omitempty"`
}

// Container is the fingerprint of one container.
type Container struct {
	Image  string   `json:"image"`
	Args   []string `json:"args,omitempty"`
	Env    []string `json:"env,omitempty"`
	Ports  []string `json:"ports,omitempty"`
	Mounts []string `json:"mounts,omitempty"`
	Probes []string `json:"probes,omitempty"`
}

// Key is an object's key in a fingerprint: its reference's one string form, Kind/namespace/name
// or Kind/name for a cluster-scoped object (ref.Ref.String).
func Key(o *unstructured.Unstructured) string {
	return ref.Of(o).String()
}

// Of fingerprints objects, keyed by Key.
func Of(objs []*unstructured.Unstructured) map[string]Object {
	out := map[string]Object{}
	for _, o := range objs {
		key := Key(o)
		fp := Object{Labels: map[string]string{}}
		for _, l := range comparedLabels {
			if v, ok := o.GetLabels()[l]; ok {
				fp.Labels[l] = v
			}
		}
		if len(fp.Labels) == 0 {
			fp.Labels = nil
		}
		podSpec, ok, _ := unstructured.NestedMap(o.Object, "spec", "template", "spec")
		if ok {
			fp.Containers = map[string]Container{}
			for _, field := range []string{"initContainers", "containers"} {
				list, _, _ := unstructured.NestedSlice(podSpec, field)
				for _, c := range list {
					m, _ := c.(map[string]any)
					fp.Containers[fmt.Sprint(m["name"])] = container(m)
				}
			}
			vols, _, _ := unstructured.NestedSlice(podSpec, "volumes")
			for _, v := range vols {
				fp.Volumes = append(fp.Volumes, compact(v))
			}
			sort.Strings(fp.Volumes)
			fp.Replicas, _, _ = unstructured.NestedFieldNoCopy(o.Object, "spec", "replicas")
		}
		if o.GetKind() == "Service" {
			ports, _, _ := unstructured.NestedSlice(o.Object, "spec", "ports")
			for _, p := range ports {
				fp.Ports = append(fp.Ports, compact(p))
			}
		}
		if rules, ok, _ := unstructured.NestedSlice(o.Object, "rules"); ok {
			for _, r := range rules {
				fp.Rules = append(fp.Rules, compact(r))
			}
			sort.Strings(fp.Rules)
		}
		if roleRef, ok, _ := unstructured.NestedMap(o.Object, "roleRef"); ok {
			fp.Rules = append(fp.Rules, "roleRef "+compact(roleRef))
			subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			for _, s := range subjects {
				fp.Rules = append(fp.Rules, "subject "+compact(s))
			}
		}
		if hooks, ok, _ := unstructured.NestedSlice(o.Object, "webhooks"); ok {
			for _, h := range hooks {
				m, _ := h.(map[string]any)
				cp := map[string]any{}
				for k, v := range m {
					if k == "clientConfig" {
						cc, _ := v.(map[string]any)
						v = map[string]any{"service": cc["service"], "url": cc["url"]}
					}
					cp[k] = v
				}
				fp.Webhooks = append(fp.Webhooks, compact(cp))
			}
			sort.Strings(fp.Webhooks)
		}
		out[key] = fp
	}
	return out
}

func container(m map[string]any) Container {
	c := Container{Image: fmt.Sprint(m["image"])}
	for _, a := range asSlice(m["args"]) {
		c.Args = append(c.Args, fmt.Sprint(a))
	}
	for _, e := range asSlice(m["env"]) {
		em, _ := e.(map[string]any)
		c.Env = append(c.Env, fmt.Sprint(em["name"]))
	}
	sort.Strings(c.Env)
	for _, p := range asSlice(m["ports"]) {
		c.Ports = append(c.Ports, compact(p))
	}
	for _, v := range asSlice(m["volumeMounts"]) {
		c.Mounts = append(c.Mounts, compact(v))
	}
	sort.Strings(c.Mounts)
	for _, probe := range []string{"readinessProbe", "livenessProbe", "startupProbe"} {
		if p, ok := m[probe]; ok {
			c.Probes = append(c.Probes, probe+" "+compact(p))
		}
	}
	return c
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// compact is a stable one-line JSON form (map keys sorted by encoding/json).
func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Diff lists the differences between want (upstream) and got (ours), one line each.
func Diff(want, got map[string]Object) []string {
	var out []string
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		w, inWant := want[k]
		g, inGot := got[k]
		switch {
		case !inGot:
			out = append(out, "missing "+k)
		case !inWant:
			out = append(out, "extra "+k)
		default:
			wj, _ := json.MarshalIndent(w, "", " ")
			gj, _ := json.MarshalIndent(g, "", " ")
			if string(wj) != string(gj) {
				out = append(out, fmt.Sprintf("differs %s:\n  upstream: %s\n  ours:     %s", k,
					strings.Join(strings.Fields(string(wj)), " "), strings.Join(strings.Fields(string(gj)), " ")))
			}
		}
	}
	return out
}
