package ownership

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// TestSelectorLeavesOtherInstalls: an install prunes only its own objects; an unnamed one
// (a profile) what a named one of its revision left, but never the east-west gateway's.
func TestSelectorLeavesOtherInstalls(t *testing.T) {
	unnamed := Owner{Namespace: DefaultNamespace, Version: "1.30.0"}
	eastwest := Owner{Name: "eastwest", Namespace: DefaultNamespace, Version: "1.30.0"}
	canary := Owner{Namespace: DefaultNamespace, Revision: "canary", Version: "1.30.0"}
	objects := map[string]map[string]string{
		"unnamed":  unnamed.Labels("IngressGateways"),
		"eastwest": eastwest.Labels("IngressGateways"),
		"canary":   canary.Labels("Pilot"),
		"older":    Owner{Namespace: DefaultNamespace, Version: "1.29.0"}.Labels("Pilot"),
		"named":    Owner{Name: "demo", Namespace: DefaultNamespace, Version: "1.30.0"}.Labels("EgressGateways"),
		"kept":     func() map[string]string { l := unnamed.Labels("Pilot"); l[LabelNotPruned] = "true"; return l }(),
	}
	for _, tc := range []struct {
		owner Owner
		want  map[string]bool
	}{
		{unnamed, map[string]bool{"unnamed": true, "older": true, "named": true}},
		{eastwest, map[string]bool{"eastwest": true}},
		{canary, map[string]bool{"canary": true}},
	} {
		sel, err := labels.Parse(tc.owner.Selector())
		if err != nil {
			t.Fatalf("%q: %v", tc.owner.Selector(), err)
		}
		for name, l := range objects {
			if got := sel.Matches(labels.Set(l)); got != tc.want[name] {
				t.Errorf("owner %q rev %q selects %s: %v, want %v", tc.owner.Name, tc.owner.Rev(), name, got, tc.want[name])
			}
		}
	}
}
