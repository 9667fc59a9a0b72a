package render

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// TestValuesConfigMapOwnerName: metadata.name names the owner in the owning-resource labels,
// while the istiod chart's values ConfigMap records ownerName as the user gave it, as
// upstream does ("" unless values.ownerName is set, which then wins in both places).
func TestValuesConfigMapOwnerName(t *testing.T) {
	for _, tc := range []struct {
		name, file                  string
		wantLabel, wantMerged       string
		wantOriginal, originalHolds bool
	}{
		{name: "metadata.name", file: "metadata:\n  name: control-plane\n", wantLabel: "control-plane"},
		{name: "values.ownerName", file: "spec:\n  values:\n    ownerName: mine\n", wantLabel: "mine", wantMerged: "mine", originalHolds: true},
		{name: "both: the value wins", file: "metadata:\n  name: control-plane\nspec:\n  values:\n    ownerName: mine\n", wantLabel: "mine", wantMerged: "mine", originalHolds: true},
		{name: "neither", file: "spec: {}\n", wantLabel: "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "spec.yaml")
			doc := "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\n" + tc.file
			if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := spec.Resolve(spec.Options{Files: []string{f}})
			if err != nil {
				t.Fatal(err)
			}
			r, err := NewRenderer("")
			if err != nil {
				t.Fatal(err)
			}
			ms, _, err := r.Render(res, component.Pilot)
			if err != nil {
				t.Fatal(err)
			}
			var found bool
			for _, m := range ms {
				for _, o := range m.Objects {
					got, labelled := o.GetLabels()["install.operator.istio.io/owning-resource"]
					if labelled && o.GetKind() == "Deployment" {
						found = true
					}
					if labelled && got != tc.wantLabel {
						t.Errorf("%s %s: owning-resource %q, want %q", o.GetKind(), o.GetName(), got, tc.wantLabel)
					}
					if o.GetKind() != "ConfigMap" || o.GetName() != "values" {
						continue
					}
					data := o.Object["data"].(map[string]any)
					var merged, original map[string]any
					if err := json.Unmarshal([]byte(data["merged-values"].(string)), &merged); err != nil {
						t.Fatal(err)
					}
					if err := json.Unmarshal([]byte(data["original-values"].(string)), &original); err != nil {
						t.Fatal(err)
					}
					if merged["ownerName"] != tc.wantMerged {
						t.Errorf("merged-values ownerName %q, want %q", merged["ownerName"], tc.wantMerged)
					}
					if _, ok := original["ownerName"]; ok != tc.originalHolds {
						t.Errorf("original-values holds ownerName: %v, want %v", ok, tc.originalHolds)
					}
					for _, m := range []map[string]any{merged, original} {
						if _, ok := m[ownerFromMetadata]; ok {
							t.Errorf("the renderer's marker %s reached the ConfigMap", ownerFromMetadata)
						}
					}
				}
			}
			if !found {
				t.Fatal("no labelled Deployment or no values ConfigMap rendered")
			}
		})
	}
}
