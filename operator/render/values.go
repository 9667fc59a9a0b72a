package render

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/render/internal/pathpatch"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Values builds the Helm values one instance's chart receives, as upstream istioctl does:
// spec.values with unvalidatedValues merged in, the top-level spec fields translated into
// values (hub, tag, revision, meshConfig, compatibilityVersion, component enablement), the
// instance's own hub, tag, name, labels and namespace under its values root. A value the
// user set in spec.values wins over a translated one, but for the components' enablement.
func Values(tree map[string]any, inst component.Instance) map[string]any {
	specTree, _ := tree["spec"].(map[string]any)
	vals := map[string]any{}
	if v, ok := specTree["values"].(map[string]any); ok {
		vals = spec.Merge(vals, v)
	}
	if v, ok := specTree["unvalidatedValues"].(map[string]any); ok {
		vals = spec.Merge(vals, v)
	}
	translateSpec(tree, specTree, vals)
	if inst.ValuesRoot != "" && inst.ValuesRoot != "global" {
		instanceValues(vals, inst)
	}
	if inst.FlattenValues {
		// As upstream: the chart reads its own keys at the top level, next to global and
		// the other top-level scalars (profile, revision, ...).
		flat := map[string]any{}
		for k, v := range vals {
			if _, isMap := v.(map[string]any); !isMap || k == "global" {
				flat[k] = v
			}
		}
		if sub, ok := vals[inst.ValuesRoot].(map[string]any); ok {
			flat = spec.Merge(flat, sub)
		}
		vals = flat
	}
	return vals
}

// setDefault sets a values path unless the user set it (or v is empty).
func setDefault(vals map[string]any, path string, v any) {
	if v == nil || v == "" {
		return
	}
	keys := strings.Split(path, ".")
	if _, ok := spec.Lookup(vals, keys...); ok {
		return
	}
	setPath(vals, keys, v)
}

// ownerFromMetadata marks values whose ownerName the renderer took from metadata.name.
const ownerFromMetadata = "_internal_owner_from_metadata"

// translateSpec puts the spec's top-level fields into the values, as upstream.
func translateSpec(tree, specTree, vals map[string]any) {
	// One hub: spec.hub is values.global.hub, which every chart and the injector read
	// unless a more specific hub or image is set (images.TestOneHubMovesEveryImage proves
	// it for every profile; --allowed-registries names any image that escapes it).
	setDefault(vals, "global.hub", specTree["hub"])
	setDefault(vals, "global.tag", specTree["tag"])
	setDefault(vals, "revision", specTree["revision"])
	setDefault(vals, "compatibilityVersion", specTree["compatibilityVersion"])
	// where spec.namespace or metadata.namespace put the components
	// (IstioOperator.ComponentsNamespace), so the charts look for istiod there
	specNS, _ := specTree["namespace"].(string)
	metaNS, _ := spec.Lookup(tree, "metadata", "namespace")
	metaStr, _ := metaNS.(string)
	if ns := v1alpha1.SpecNamespace(specNS, metaStr); ns != "" {
		setPath(vals, []string{"global", "istioNamespace"}, ns)
	}
	if mc, ok := specTree["meshConfig"].(map[string]any); ok {
		user, _ := vals["meshConfig"].(map[string]any)
		vals["meshConfig"] = spec.Merge(mc, user)
	}
	// metadata.name names the owner in the charts' owning-resource labels; the istiod chart's
	// values ConfigMap records ownerName as the user gave it (upstream's, "" unless set), which
	// the marker tells it (templates/setup/effective-values.yaml).
	if name, ok := spec.Lookup(tree, "metadata", "name"); ok && name != nil && name != "" {
		if _, set := vals["ownerName"]; !set {
			vals["ownerName"] = name
			vals[ownerFromMetadata] = true
		}
	}
	// spec.eastWest (this tool's) reaches the ingress gateway chart, which renders the
	// expose objects with the gateway named istio-eastwestgateway.
	for _, k := range []string{"exposeIstiod", "exposeServices"} {
		if v, _ := spec.Lookup(specTree, "eastWest", k); v == true {
			setPath(vals, []string{"gateways", "istio-ingressgateway", k}, true)
		}
	}
	enabled := func(key string) bool {
		v, _ := spec.Lookup(specTree, "components", key, "enabled")
		b, _ := v.(bool)
		return b
	}
	// As upstream: the components' enablement tells the charts of each other, over what the
	// values say (values.pilot.cni.enabled=true without the CNI component renders false:
	// injection must not skip istio-init when no CNI node agent is installed).
	for path, key := range map[string]string{"pilot.enabled": "pilot", "pilot.cni.enabled": "cni"} {
		setPath(vals, strings.Split(path, "."), enabled(key))
	}
}

// instanceValues puts an instance's own settings under its values root: hub, tag, a
// gateway's name and labels, and the k8s settings upstream turns into values (replicas,
// autoscaling bounds, the CPU of resources, a gateway's Service ports).
func instanceValues(vals map[string]any, inst component.Instance) {
	set := func(path string, v any) {
		if v == nil || v == "" {
			return
		}
		setPath(vals, splitRoot(path), v)
	}
	root := inst.ValuesRoot
	set(root+".hub", inst.Hub)
	set(root+".tag", inst.Tag)
	if inst.Multi {
		set(root+".name", inst.InstanceName)
		if len(inst.Label) > 0 {
			labels := map[string]any{}
			for k, v := range inst.Label {
				labels[k] = v
			}
			set(root+".labels", labels)
		}
	}
	k := inst.K8s
	if k == nil {
		return
	}
	if k.ReplicaCount != nil {
		set(root+".replicaCount", *k.ReplicaCount)
	}
	if k.Resources != nil {
		// Upstream carries only the CPU of k8s.resources into the values, over theirs.
		for field, list := range map[string]corev1.ResourceList{"requests": k.Resources.Requests, "limits": k.Resources.Limits} {
			if q, ok := list[corev1.ResourceCPU]; ok {
				set(root+".resources."+field+".cpu", q.String())
			}
		}
	}
	if k.HpaSpec != nil {
		if k.HpaSpec.MinReplicas != nil {
			set(root+".autoscaleMin", int64(*k.HpaSpec.MinReplicas))
		}
		if k.HpaSpec.MaxReplicas > 0 {
			set(root+".autoscaleMax", int64(k.HpaSpec.MaxReplicas))
		}
	}
	if inst.Multi && k.Service != nil && len(k.Service.Ports) > 0 {
		set(root+".ports", servicePorts(k.Service.Ports))
	}
}

// servicePorts are a gateway's k8s.service.ports as its chart's ports value, each port as
// Kubernetes' JSON writes it, as upstream passes them: a port without targetPort has
// targetPort 0 (which the apiserver defaults to the port), appProtocol is kept.
func servicePorts(ports []corev1.ServicePort) []any {
	var out []any
	for _, p := range ports {
		b, err := json.Marshal(p)
		var m map[string]any
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		if err != nil {
			continue // a typed ServicePort always round-trips
		}
		out = append(out, pathpatch.Normalize(m))
	}
	return out
}

// splitRoot splits a values path; a gateway kind's root (component.All) holds a dash-named
// key.
func splitRoot(path string) []string {
	for _, c := range component.GatewayKinds() {
		if root := c.ValuesRoot; strings.HasPrefix(path, root+".") {
			return append([]string{"gateways", c.ValuesKey()}, strings.Split(path[len(root)+1:], ".")...)
		}
	}
	return strings.Split(path, ".")
}

func setPath(m map[string]any, keys []string, v any) {
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
