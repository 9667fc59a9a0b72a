package spec

import (
	"reflect"
	"testing"
)

func TestFillEastWestGateway(t *testing.T) {
	env := func(v string) []any { return []any{map[string]any{"name": RequestedNetworkViewEnv, "value": v}} }
	for _, tc := range []struct {
		name      string
		network   string
		gw        map[string]any
		wantLabel any
		wantEnv   any
	}{
		{"filled", "net1", map[string]any{"name": EastWestGatewayName}, "net1", env("net1")},
		{"no network: the single-cluster gateway", "", map[string]any{"name": EastWestGatewayName}, nil, nil},
		{"a file's label and env stay", "net1",
			map[string]any{"name": EastWestGatewayName, "label": map[string]any{LabelNetwork: "other"}, "k8s": map[string]any{"env": env("other")}},
			"other", env("other")},
		{"another gateway is left alone", "net1", map[string]any{"name": "istio-ingressgateway"}, nil, nil},
		{"a disabled one too", "net1", map[string]any{"name": EastWestGatewayName, "enabled": false}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values := map[string]any{}
			if tc.network != "" {
				values["global"] = map[string]any{"network": tc.network}
			}
			tree := map[string]any{"spec": map[string]any{"values": values, "components": map[string]any{"ingressGateways": []any{tc.gw}}}}
			if ps := FillEastWestGateway(tree); len(ps) > 0 {
				t.Errorf("problems %v", ps)
			}
			label, _ := Lookup(tc.gw, "label", LabelNetwork)
			e, _ := Lookup(tc.gw, "k8s", "env")
			if !reflect.DeepEqual(label, tc.wantLabel) || !reflect.DeepEqual(e, tc.wantEnv) {
				t.Errorf("label %v, env %v; want %v, %v", label, e, tc.wantLabel, tc.wantEnv)
			}
		})
	}
}

func TestEastWestWithoutTheGatewayWarns(t *testing.T) {
	tree := map[string]any{"spec": map[string]any{"eastWest": map[string]any{"exposeIstiod": true},
		"components": map[string]any{"ingressGateways": []any{map[string]any{"name": "istio-ingressgateway"}}}}}
	ps := FillEastWestGateway(tree)
	if len(ps) != 1 || !ps[0].Warning || ps[0].Path != "spec.eastWest" {
		t.Errorf("problems %+v, want one warning at spec.eastWest", ps)
	}
}
