package v1alpha1

import "testing"

// The three namespaces of an install spec: spec.namespace, then metadata.namespace, place
// the components (metadata.namespace: istio-system, which every profile sets, names none);
// failing both, values.global.istioNamespace does (the only one upstream
// master reads); the owner's namespace is metadata.namespace alone.
func TestNamespaces(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		spec, meta, values        string
		components, owner, charts string
	}{
		{"nothing named", "", "", "", "istio-system", "istio-system", "istio-system"},
		{"values.global.istioNamespace alone, as upstream", "", "", "mesh", "mesh", "istio-system", "mesh"},
		{"metadata.namespace", "", "meta", "", "meta", "meta", "istio-system"},
		{"spec.namespace over metadata.namespace", "spec", "meta", "", "spec", "meta", "istio-system"},
		{"spec.namespace over values.global.istioNamespace", "spec", "", "mesh", "spec", "istio-system", "mesh"},
		{"metadata.namespace over values.global.istioNamespace", "", "meta", "mesh", "meta", "meta", "mesh"},
		{"metadata.namespace istio-system, as every profile gives it, names none", "", "istio-system", "mesh", "mesh", "istio-system", "mesh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iop := &IstioOperator{}
			iop.Spec.Namespace, iop.Metadata.Namespace = tc.spec, tc.meta
			if tc.values != "" {
				iop.Spec.Values = map[string]any{"global": map[string]any{"istioNamespace": tc.values}}
			}
			if got := iop.ComponentsNamespace(); got != tc.components {
				t.Errorf("ComponentsNamespace = %q, want %q", got, tc.components)
			}
			if got := iop.OwnerNamespace(); got != tc.owner {
				t.Errorf("OwnerNamespace = %q, want %q", got, tc.owner)
			}
			if got := iop.IstioNamespace(); got != tc.charts {
				t.Errorf("IstioNamespace = %q, want %q", got, tc.charts)
			}
		})
	}
	var none *IstioOperator
	if got := none.ComponentsNamespace(); got != DefaultNamespace {
		t.Errorf("nil: ComponentsNamespace = %q", got)
	}
}
