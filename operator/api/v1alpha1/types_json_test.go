package v1alpha1

import (
	"bytes"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestKubernetesResourcesJSON: KubernetesResources.MarshalJSON encodes as encoding/json
// encodes the struct, inside a spec, with and without HTML escaping, and decodes back.
func TestKubernetesResourcesJSON(t *testing.T) {
	two := int64(2)
	k := &KubernetesResources{
		ReplicaCount:   &two,
		Env:            []corev1.EnvVar{{Name: "A", Value: "<b>&amp;</b>"}},
		PodAnnotations: map[string]string{"z": "1", "a": "x>y"},
		Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("100m")}},
		Overlays: []KubernetesOverlay{{Kind: "Deployment", Name: "istiod",
			Patches: []Patch{{Path: "spec.replicas", Value: 3}}}},
	}
	for _, c := range []struct {
		name string
		v    any // holds KubernetesResources, with its MarshalJSON
		raw  any // the same content as plain structs
	}{
		{"empty", &KubernetesResources{}, &kubernetesResources{}},
		{"alone", k, (*kubernetesResources)(k)},
		{"in a spec", &ComponentSpec{Hub: "h", Kubernetes: k}, &struct {
			Enabled    *bool                `json:"enabled,omitempty"`
			Namespace  string               `json:"namespace,omitempty"`
			Hub        string               `json:"hub,omitempty"`
			Tag        string               `json:"tag,omitempty"`
			Kubernetes *kubernetesResources `json:"k8s,omitempty"`
		}{Hub: "h", Kubernetes: (*kubernetesResources)(k)}},
	} {
		for _, escape := range []bool{true, false} {
			var got, want bytes.Buffer
			for _, e := range []struct {
				w *bytes.Buffer
				v any
			}{{&got, c.v}, {&want, c.raw}} {
				enc := json.NewEncoder(e.w)
				enc.SetEscapeHTML(escape)
				enc.SetIndent("", "  ")
				if err := enc.Encode(e.v); err != nil {
					t.Fatal(err)
				}
			}
			if got.String() != want.String() {
				t.Errorf("%s (escape %v):\n%s\nwant\n%s", c.name, escape, got.String(), want.String())
			}
		}
	}
	b, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	var back KubernetesResources
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if *back.ReplicaCount != 2 || back.Env[0].Value != "<b>&amp;</b>" || back.Resources.Requests.Cpu().String() != "100m" {
		t.Errorf("decoded back: %+v", back)
	}
}
