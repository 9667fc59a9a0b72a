package render

import (
	"strings"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Values builds the Helm values one instance's chart receives, as upstream istioctl does:
// spec.values with unvalidatedValues merged in, the top-level spec fields translated into
// values (hub, tag, revision, meshConfig, compatibilityVersion, component enablement), the
// instance's own hub, tag, name, labels and namespace under its values root. A value the
// user set in spec.values wins over a translated one.
func Values(tree map[string]any, inst component.Instance) map[string]any {
	specTree, _ := tree["spec"].(map[string]any)
	vals := map[string]any{}
	if v, ok := specTree["values"].(map[string]any); ok {
		vals = spec.Merge(vals, v)
	}
	if v, ok := specTree["unvalidatedValues"].(map[string]any); ok {
		vals = spec.Merge(vals, v)
	}

	setDefault := func(path string, v any) {
		if v == nil || v == "" {
			return
		}
		keys := strings.Split(path, ".")
		if _, ok := spec.Lookup(vals, keys...); ok {
			return
		}
		setPath(vals, keys, v)
	}
	set := func(path string, v any) {
		if v == nil || v == "" {
			return
		}
		setPath(vals, splitRoot(path), v)
	}

	setDefault("global.hub", specTree["hub"])
	setDefault("global.tag", specTree["tag"])
	setDefault("revision", specTree["revision"])
	setDefault("compatibilityVersion", specTree["compatibilityVersion"])
	if ns, ok := spec.Lookup(tree, "metadata", "namespace"); ok {
		setDefault("global.istioNamespace", ns)
	}
	if mc, ok := specTree["meshConfig"].(map[string]any); ok {
		user, _ := vals["meshConfig"].(map[string]any)
		vals["meshConfig"] = spec.Merge(mc, user)
	}
	if name, ok := spec.Lookup(tree, "metadata", "name"); ok {
		setDefault("ownerName", name)
	}
	enabled := func(key string) bool {
		v, _ := spec.Lookup(specTree, "components", key, "enabled")
		b, _ := v.(bool)
		return b
	}
	// As upstream: the components' enablement tells the charts of each other; a value the
	// user set there wins (values.pilot.cni.enabled without the CNI component, for one).
	for path, key := range map[string]string{"pilot.enabled": "pilot", "pilot.cni.enabled": "cni"} {
		if _, set := spec.Lookup(vals, strings.Split(path, ".")...); !set {
			setPath(vals, strings.Split(path, "."), enabled(key))
		}
	}

	if inst.ValuesRoot != "" && inst.ValuesRoot != "global" {
		set(inst.ValuesRoot+".hub", inst.Hub)
		set(inst.ValuesRoot+".tag", inst.Tag)
	}
	if inst.Multi {
		set(inst.ValuesRoot+".name", inst.InstanceName)
		if len(inst.Label) > 0 {
			labels := map[string]any{}
			for k, v := range inst.Label {
				labels[k] = v
			}
			set(inst.ValuesRoot+".labels", labels)
		}
	}
	if k := inst.K8s; k != nil && inst.ValuesRoot != "" && inst.ValuesRoot != "global" {
		if k.ReplicaCount != nil {
			set(inst.ValuesRoot+".replicaCount", *k.ReplicaCount)
		}
		if k.HpaSpec != nil {
			if k.HpaSpec.MinReplicas != nil {
				set(inst.ValuesRoot+".autoscaleMin", int64(*k.HpaSpec.MinReplicas))
			}
			if k.HpaSpec.MaxReplicas > 0 {
				set(inst.ValuesRoot+".autoscaleMax", int64(k.HpaSpec.MaxReplicas))
			}
		}
		if inst.Multi && k.Service != nil && len(k.Service.Ports) > 0 {
			var out []any
			for _, p := range k.Service.Ports {
				m := map[string]any{"port": int64(p.Port), "name": p.Name}
				if p.TargetPort.IntVal != 0 || p.TargetPort.StrVal != "" {
					if p.TargetPort.StrVal != "" {
						m["targetPort"] = p.TargetPort.StrVal
					} else {
						m["targetPort"] = int64(p.TargetPort.IntVal)
					}
				}
				if p.Protocol != "" {
					m["protocol"] = string(p.Protocol)
				}
				if p.NodePort != 0 {
					m["nodePort"] = int64(p.NodePort)
				}
				out = append(out, m)
			}
			set(inst.ValuesRoot+".ports", out)
		}
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

// splitRoot splits a values path; the gateway roots hold a dash-named key.
func splitRoot(path string) []string {
	for _, root := range []string{"gateways.istio-ingressgateway", "gateways.istio-egressgateway"} {
		if strings.HasPrefix(path, root+".") {
			return append([]string{"gateways", root[len("gateways."):]}, strings.Split(path[len(root)+1:], ".")...)
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
