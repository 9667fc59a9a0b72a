package spec_test

import (
	"fmt"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Which components a spec installs, as upstream decides it: a component absent from
// spec.components takes its default, a present one is on unless enabled: false, and the
// Helm-level values.gateways.<gateway>.enabled: true turns on every gateway of its list
// (false turns nothing off, with a warning). The components' enablement wins over the
// Helm-level values translated from it (values.pilot.enabled, values.pilot.cni.enabled).
func TestHelmLevelEnablement(t *testing.T) {
	const egress, ingress = "values.gateways.istio-egressgateway.enabled", "values.gateways.istio-ingressgateway.enabled"
	// The Helm values istiod's chart is given about CNI and itself.
	pilotValues := func(_ specCase, res *spec.Resolved) string {
		for _, i := range component.Instances(res.IOP) {
			if i.Name == component.Pilot {
				v := render.Values(res.Tree, i)
				cni, _ := spec.Lookup(v, "pilot", "cni", "enabled")
				on, _ := spec.Lookup(v, "pilot", "enabled")
				return fmt.Sprintf("istiod chart values: pilot.enabled=%v pilot.cni.enabled=%v\n", on, cni)
			}
		}
		return ""
	}
	resolveCases(t, "enablement.txt", []specCase{
		{name: "egress turned on by its Helm-level value (the profile lists it disabled)", sets: []string{egress + "=true"}},
		{name: "ingress turned on by its Helm-level value in profile minimal", sets: []string{"profile=minimal", ingress + "=true"}},
		{name: "the Helm-level value beats enabled: false on every listed gateway", files: map[string]string{"gws.yaml": header +
			"spec:\n  components:\n    egressGateways:\n    - name: eg-a\n      enabled: false\n    - name: eg-b\n  values:\n    gateways:\n      istio-egressgateway:\n        enabled: true\n"}},
		{name: "the Helm-level value turns on the default gateway when the list is absent", files: map[string]string{"nolist.yaml": header +
			"spec:\n  components:\n    egressGateways: null\n  values:\n    gateways:\n      istio-egressgateway:\n        enabled: true\n"}},
		{name: "an empty list stays empty, whatever the Helm-level value", files: map[string]string{"empty.yaml": header +
			"spec:\n  components:\n    ingressGateways: []\n  values:\n    gateways:\n      istio-ingressgateway:\n        enabled: true\n"}},
		{name: "false turns nothing off (as upstream), with a warning", sets: []string{ingress + "=false"}},
		{name: "a string is not a boolean: nothing turned on", files: map[string]string{"str.yaml": header +
			"spec:\n  unvalidatedValues:\n    gateways:\n      istio-egressgateway:\n        enabled: \"true\"\n"}},
		{name: "profile empty: the Helm-level value alone brings the ingress gateway", sets: []string{"profile=empty", ingress + "=true"}},
		{name: "a component entry without enabled is on (CNI in its own namespace)", sets: []string{"components.cni.namespace=kube-system"}},
		{name: "ztunnel entry without enabled is on", files: map[string]string{"zt.yaml": header + "spec:\n  components:\n    ztunnel:\n      namespace: kube-system\n"}},
		{name: "components.pilot.enabled: false wins over values.pilot.enabled: true", sets: []string{"components.pilot.enabled=false", "values.pilot.enabled=true"}},
		{name: "values.cni.enabled does not install CNI (as upstream), with a warning", sets: []string{"values.cni.enabled=true"}},
		{name: "values.pilot.cni.enabled=true does not reach istiod's chart without the CNI component", sets: []string{"values.pilot.cni.enabled=true"}},
		{name: "values.pilot.cni.enabled=false does not reach istiod's chart with the CNI component", sets: []string{"components.cni.enabled=true", "values.pilot.cni.enabled=false"}},
		{name: "values.pilot.enabled=false does not reach istiod's chart while istiod is on", sets: []string{"values.pilot.enabled=false"}},
		{name: "components.cni.enabled tells istiod's chart of CNI", sets: []string{"components.cni.enabled=true"}},
		{name: "components: null: the defaults (Base, istiod, the ingress gateway)", files: map[string]string{"null.yaml": header + "spec:\n  components: null\n"}},
	}, pilotValues)
}
