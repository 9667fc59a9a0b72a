package spec

import (
	"strings"
	"testing"
)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "a.b.c", want: "a.b.c"},
		{in: "values.gateways.istio-ingressgateway.type", want: "values.gateways.istio-ingressgateway.type"},
		{in: `meshConfig.defaultConfig.proxyMetadata.ISTIO_META\.DNS`, want: `meshConfig.defaultConfig.proxyMetadata.ISTIO_META\.DNS`},
		{in: "components.ingressGateways[0].enabled", want: "components.ingressGateways[0].enabled"},
		{in: "components.ingressGateways.[0].enabled", want: "components.ingressGateways[0].enabled"},
		{in: "components.ingressGateways[name:istio-ingressgateway].k8s", want: "components.ingressGateways[name:istio-ingressgateway].k8s"},
		{in: "a[0][1]", want: "a[0][1]"},
		{in: "a.[:x]", want: "a[:x]"},
		{in: "", err: "empty path"},
		{in: "a..b", err: "empty key"},
		{in: ".a", err: "empty key"},
		{in: "a.", err: "empty key"},
		{in: "a[0", err: "unclosed ["},
		{in: "a]", err: "unexpected ]"},
		{in: "a[x]", err: "neither an index"},
		{in: "a[-1]", err: "neither an index"},
		{in: "a[name:]", err: "has no value"},
		{in: "a[0]b", err: "want . or ["},
		{in: "a b", err: "space in path"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			p, err := ParsePath(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParsePath(%q) error = %v, want %q", tc.in, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.String(); got != tc.want {
				t.Errorf("ParsePath(%q).String() = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
