package v1alpha1

import (
	"fmt"
	"strings"
	"testing"
)

// TestNumbersAsText: meshConfig and values are protobuf messages upstream reads with
// protobuf's JSON, which takes a number written as a string ("9081"); the value is kept as
// written, as upstream passes it on. Kubernetes-typed fields (components.*.k8s, the
// Kubernetes objects held in values) keep Go's JSON rules, and no section takes "true".
func TestNumbersAsText(t *testing.T) {
	for _, tc := range []struct {
		name, doc, path, want, err string
	}{
		{"meshConfig provider port", "meshConfig:\n  extensionProviders:\n  - name: a\n    envoyExtAuthzGrpc:\n      service: a.b.svc\n      port: \"9081\"\n",
			"meshConfig.extensionProviders", `[map[envoyExtAuthzGrpc:map[port:9081 service:a.b.svc] name:a]]`, ""},
		{"meshConfig double", "meshConfig:\n  defaultConfig:\n    tracing:\n      sampling: \"10.5\"\n", "meshConfig.defaultConfig.tracing.sampling", "10.5", ""},
		{"values integer", "values:\n  pilot:\n    autoscaleMin: \"2\"\n", "values.pilot.autoscaleMin", "2", ""},
		{"values float", "values:\n  pilot:\n    traceSampling: \"5.5\"\n", "values.pilot.traceSampling", "5.5", ""},
		{"not a number", "values:\n  pilot:\n    autoscaleMin: \"two\"\n", "", "", `want an integer, got "two"`},
		{"k8s replicaCount", "components:\n  pilot:\n    k8s:\n      replicaCount: \"2\"\n", "", "", `want an integer, got "2"`},
		{"a toleration in values", "values:\n  pilot:\n    tolerations:\n    - key: a\n      operator: Exists\n      tolerationSeconds: \"30\"\n", "", "", `want an integer, got "30"`},
		{"a boolean as text", "meshConfig:\n  enableTracing: \"true\"\n", "", "", `want true or false, got "true"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n" + indent(tc.doc)
			tree, _, ps := DecodeFile("spec.yaml", []byte(doc))
			if errs := ps.Errors(); tc.err != "" || errs != nil {
				if tc.err == "" || errs == nil || !strings.Contains(errs.Error(), tc.err) {
					t.Fatalf("problems %v, want one with %q", errs, tc.err)
				}
				return
			}
			v := any(tree["spec"])
			for _, k := range strings.Split(tc.path, ".") {
				v = v.(map[string]any)[k]
			}
			if got := fmt.Sprint(v); got != tc.want {
				t.Errorf("%s = %s, want %s", tc.path, got, tc.want)
			}
		})
	}
}

func indent(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}
