package render_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	sjson "sigs.k8s.io/json"

	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/fingerprint"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
	"github.com/istioctl-installer/istioctl/pkg/testing/rendertest"
)

// cases are the renders checked against upstream and kept as golden files.
var cases = []struct {
	name string
	sets []string
}{
	{"default", nil},
	{"demo", []string{"profile=demo"}},
	{"minimal", []string{"profile=minimal"}},
	{"empty", []string{"profile=empty"}},
	{"ambient", []string{"profile=ambient"}},
	{"remote", []string{"profile=remote"}},
	{"preview", []string{"profile=preview"}},
	{"stable", []string{"profile=stable"}},
	{"openshift", []string{"profile=openshift"}},
	{"openshift-ambient", []string{"profile=openshift-ambient"}},
	{"default-revision-canary", []string{"revision=canary"}},
}

func renderSets(t *testing.T, sets []string) []*unstructured.Unstructured {
	t.Helper()
	_, ms := rendertest.Sets(t, sets...)
	return render.All(ms)
}

// TestMatchesUpstream compares every profile's render with what upstream istioctl master
// renders (testdata/upstream, recorded by hack/upstream-fingerprints.sh): the same objects,
// images, args, env var names, ports, probes, mounts, RBAC rules, webhooks and labels.
func TestMatchesUpstream(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("../../testdata/upstream", tc.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]fingerprint.Object{}
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			got := fingerprint.Of(renderSets(t, tc.sets))
			if diffs := fingerprint.Diff(want, got); len(diffs) > 0 {
				t.Errorf("%d differences from upstream:\n%s", len(diffs), strings.Join(diffs, "\n"))
			}
		})
	}
}

// TestGoldenManifests keeps every profile's full render (CRD bodies aside: they are a
// generated file of their own) so any change to the output is a reviewed diff.
func TestGoldenManifests(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := renderSets(t, tc.sets)
			var kept []*unstructured.Unstructured
			var crds []string
			for _, o := range objs {
				if o.GetKind() == "CustomResourceDefinition" {
					crds = append(crds, o.GetName())
					continue
				}
				kept = append(kept, o)
			}
			out, err := render.YAML(kept)
			if err != nil {
				t.Fatal(err)
			}
			header := fmt.Sprintf("# %d objects; CRDs (bodies in manifests/charts/base/crds): %s\n", len(objs), strings.Join(crds, ", "))
			golden.Check(t, filepath.Join("../../testdata/manifests", tc.name+".yaml"), append([]byte(header), out...))
		})
	}
}

// TestStrictDecode decodes every rendered object into its Kubernetes Go type, rejecting
// unknown fields: a typo in a template fails here, not at apply time.
func TestStrictDecode(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, o := range renderSets(t, tc.sets) {
				gvk := o.GroupVersionKind()
				typed, err := scheme.Scheme.New(gvk)
				if runtime.IsNotRegisteredError(err) {
					if gvk.Kind == "CustomResourceDefinition" || gvk.Group == "k8s.cni.cncf.io" {
						continue // checked by the apiserver in the e2e test
					}
					t.Errorf("%s: no Go type for %s", o.GetName(), gvk)
					continue
				}
				b, err := o.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				strict, err := sjson.UnmarshalStrict(b, typed)
				if err != nil {
					t.Errorf("%s %s: %v", gvk.Kind, o.GetName(), err)
				}
				for _, e := range strict {
					t.Errorf("%s %s: %v", gvk.Kind, o.GetName(), e)
				}
			}
		})
	}
}

// TestDeterministic renders twice and compares the bytes.
func TestDeterministic(t *testing.T) {
	a, _ := render.YAML(renderSets(t, []string{"profile=demo"}))
	b, _ := render.YAML(renderSets(t, []string{"profile=demo"}))
	if string(a) != string(b) {
		t.Error("two renders of the same spec differ")
	}
}

// TestGoldenK8sSettings renders a spec setting every components.*.k8s field (istiod, and an
// extra gateway in its own namespace) and keeps the affected objects as a golden file.
func TestGoldenK8sSettings(t *testing.T) {
	res, err := spec.Resolve(spec.Options{Files: []string{"../../testdata/spec/k8s/all-settings.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := render.NewRenderer("")
	ms, _, err := r.Render(res)
	if err != nil {
		t.Fatal(err)
	}
	var kept []*unstructured.Unstructured
	for _, m := range ms {
		if m.Instance.Key() != "Pilot" && m.Instance.Key() != "IngressGateways/edge" {
			continue
		}
		for _, o := range m.Objects {
			switch o.GetKind() {
			case "Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget":
				kept = append(kept, o)
			}
		}
	}
	render.Sort(kept)
	out, err := render.YAML(kept)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "../../testdata/manifests/k8s-settings.yaml", out)
}
