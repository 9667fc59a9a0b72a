package ref

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestStringAndParse(t *testing.T) {
	for _, tc := range []struct {
		ref  Ref
		want string
	}{
		{New("Deployment", "istio-system", "istiod"), "Deployment/istio-system/istiod"},
		{New("ClusterRole", "", "istiod"), "ClusterRole/istiod"},
		{Ref{Group: "apps", Kind: "Deployment", Namespace: "ns", Name: "n"}, "Deployment/ns/n"},
	} {
		if got := tc.ref.String(); got != tc.want {
			t.Errorf("%#v: String() = %q, want %q", tc.ref, got, tc.want)
		}
		back, err := Parse(tc.want)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.want, err)
		}
		if want := New(tc.ref.Kind, tc.ref.Namespace, tc.ref.Name); back != want {
			t.Errorf("Parse(%q) = %#v, want %#v", tc.want, back, want)
		}
	}
	for _, bad := range []string{"", "Deployment", "Deployment//n", "a/b/c/d", "/ns/n"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) took it", bad)
		}
	}
}

// TestOfKeepsTheGroup: two kinds of one name in two groups are two objects.
func TestOfKeepsTheGroup(t *testing.T) {
	gw := func(apiVersion string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetAPIVersion(apiVersion)
		o.SetKind("Gateway")
		o.SetNamespace("ns")
		o.SetName("gw")
		return o
	}
	istio, api := Of(gw("networking.istio.io/v1")), Of(gw("gateway.networking.k8s.io/v1"))
	if istio == api || istio.String() != api.String() || istio.Group != "networking.istio.io" {
		t.Errorf("Of: %#v and %#v", istio, api)
	}
}
