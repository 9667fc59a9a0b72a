package spec

import (
	"fmt"
	"io/fs"

	yaml "go.yaml.in/yaml/v3"

	"github.com/istioctl-installer/istioctl/manifests"
	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
)

// The values schema types values.ztunnel by the ztunnel chart's defaults. The API types
// read no charts: the spec, which validates against the schema, gives them the embedded
// chart's, before anything is decoded.
func init() {
	b, err := fs.ReadFile(manifests.Charts, "charts/ztunnel/values.yaml")
	if err != nil {
		panic(fmt.Sprintf("the embedded ztunnel chart has no values.yaml: %v", err))
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		panic(fmt.Sprintf("the embedded ztunnel chart's values.yaml: %v", err))
	}
	v1alpha1.SetZtunnelDefaults(doc["_internal_defaults_do_not_set"])
}
