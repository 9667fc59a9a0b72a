package spec

import "github.com/istioctl-installer/istioctl/operator/api/v1alpha1"

// The east-west gateway's names, as upstream's samples/multicluster/gen-eastwest-gateway.sh
// writes them: istiod finds a network's gateway by the network label on its Service.
const (
	EastWestGatewayName = "istio-eastwestgateway"
	LabelNetwork        = "topology.istio.io/network"
	// RequestedNetworkViewEnv keeps the gateway's routes inside its own network.
	RequestedNetworkViewEnv = "ISTIO_META_REQUESTED_NETWORK_VIEW"
)

// FillEastWestGateway gives each enabled ingress gateway named istio-eastwestgateway the
// network label and ISTIO_META_REQUESTED_NETWORK_VIEW of values.global.network, where the
// spec leaves them unset: what gen-eastwest-gateway.sh --network writes, so the eastwest
// profile needs only the network. A label or env a file sets is kept as it is.
// spec.eastWest without that gateway is a warning: nothing would expose what it asks for.
func FillEastWestGateway(tree map[string]any) v1alpha1.Problems {
	spec, _ := tree["spec"].(map[string]any)
	network, _ := stringValue(spec, "values", "global", "network")
	gws, _ := Lookup(spec, "components", "ingressGateways")
	list, _ := gws.([]any)
	found := false
	for _, g := range list {
		gw, _ := g.(map[string]any)
		if gw == nil || gw["name"] != EastWestGatewayName || gw["enabled"] == false {
			continue
		}
		found = true
		if network == "" {
			continue
		}
		labels, _ := gw["label"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			gw["label"] = labels
		}
		if _, ok := labels[LabelNetwork]; !ok {
			labels[LabelNetwork] = network
		}
		k8s, _ := gw["k8s"].(map[string]any)
		if k8s == nil {
			k8s = map[string]any{}
			gw["k8s"] = k8s
		}
		env, _ := k8s["env"].([]any)
		has := false
		for _, e := range env {
			if m, _ := e.(map[string]any); m != nil && m["name"] == RequestedNetworkViewEnv {
				has = true
			}
		}
		if !has {
			k8s["env"] = append(env, map[string]any{"name": RequestedNetworkViewEnv, "value": network})
		}
	}
	if ew, _ := spec["eastWest"].(map[string]any); len(ew) > 0 && !found {
		return v1alpha1.Problems{{Path: "spec.eastWest", Warning: true,
			Msg: "no ingress gateway named " + EastWestGatewayName + " is enabled, so nothing is exposed: install it with profile eastwest (" + DocsURL + "multicluster.md)"}}
	}
	return nil
}

func stringValue(m map[string]any, path ...string) (string, bool) {
	v, ok := Lookup(m, path...)
	s, _ := v.(string)
	return s, ok && s != ""
}
