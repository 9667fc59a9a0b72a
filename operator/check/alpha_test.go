package check

import "testing"

// Which alpha annotations istiod or the injector write, so that precheck does not report
// an install's own pods (upstream's analyzer leaves the same ones out).
func TestSetByIstio(t *testing.T) {
	const (
		cni    = `{"initContainers":null,"containers":["istio-proxy"]}`
		noCNI  = `{"initContainers":["istio-init"],"containers":["istio-proxy"]}`
		status = "sidecar.istio.io/status"
		mode   = "sidecar.istio.io/interceptionMode"
	)
	for _, tc := range []struct {
		name, kind string
		ann        map[string]string
		want       bool
	}{
		{"istio.io/rev", "Pod", nil, true},
		{"istio.io/rev", "Deployment", nil, true},
		{status, "Pod", nil, true},
		{"gateway.istio.io/controller-version", "Deployment", nil, true},
		{mode, "Pod", map[string]string{status: cni}, true},
		{mode, "Pod", nil, true}, // no istio-init: as upstream, CNI or not injected
		{mode, "Pod", map[string]string{status: noCNI}, false},
		{"traffic.sidecar.istio.io/includeOutboundIPRanges", "Pod", map[string]string{status: noCNI}, false},
		{mode, "Deployment", nil, false},
		{"sidecar.istio.io/statsInclusionPrefixes", "Pod", nil, false},
	} {
		if got := setByIstio(tc.name, tc.kind, tc.ann); got != tc.want {
			t.Errorf("setByIstio(%s on %s, %v) = %v, want %v", tc.name, tc.kind, tc.ann, got, tc.want)
		}
	}
}
