package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// TestIstiodNotes checks istiod's NOTES.txt: a removed setting fails the render naming it,
// a moved one warns with its replacement (each once, in name order), and a path counts as
// set only when every step of it is a map key and the value is not null.
func TestIstiodNotes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sets     []string
		err      string
		warnings []string
	}{
		{name: "default"},
		{name: "removed", sets: []string{"unvalidatedValues.global.tracer.stackdriver.debug=true"},
			err: `the setting "global.tracer.stackdriver.debug" has been removed`},
		{name: "removed, deep", sets: []string{"unvalidatedValues.meshConfig.defaultConfig.tracing.stackdriver.maxNumberOfMessageEvents=3"},
			err: `the setting "meshConfig.defaultConfig.tracing.stackdriver.maxNumberOfMessageEvents" has been removed`},
		{name: "parent of a removed one", sets: []string{"unvalidatedValues.telemetry.v2.prometheus.enabled=true"}},
		{name: "moved", sets: []string{"unvalidatedValues.global.mtls.auto=true", "unvalidatedValues.istiocoredns.enabled=false"},
			warnings: []string{
				`"global.mtls.auto" is deprecated; use "meshConfig.enableAutoMtls" instead.`,
				`"istiocoredns.enabled" is deprecated; use "DNS capture in the proxy (ISTIO_META_DNS_CAPTURE)" instead.`,
			}},
		{name: "a scalar where a map was", sets: []string{"unvalidatedValues.global.mtls=strict"}},
		{name: "empty map", sets: []string{"unvalidatedValues.global.certificates=[]"},
			warnings: []string{`"global.certificates" is deprecated; use "meshConfig.certificates" instead.`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := spec.Resolve(spec.Options{Sets: tc.sets})
			if err != nil {
				t.Fatal(err)
			}
			r, err := NewRenderer("")
			if err != nil {
				t.Fatal(err)
			}
			_, warnings, err := r.Render(res, component.Pilot)
			if fmt.Sprint(err) != "<nil>" || tc.err != "" {
				if err == nil || tc.err == "" || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if strings.Join(warnings, "\n") != strings.Join(tc.warnings, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(tc.warnings, "\n"))
			}
		})
	}
}
