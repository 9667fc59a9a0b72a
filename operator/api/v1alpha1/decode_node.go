package v1alpha1

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// DecodeSpecNode checks n, an IstioOperator's spec embedded in another document (a fleet
// file's shared spec or a cluster's overlay), against the schema of spec. It returns the
// whole IstioOperator document around it (apiVersion, kind, spec), the line of every
// field keyed by its IstioOperator path (spec.values.global.meshID) so a resolution can
// name where each was set, and the problems with the lines of the enclosing file; their
// paths start at at (the enclosing document's path of n) instead of spec. It spends from
// budget, the enclosing file's, which every part decoded from that file shares.
func DecodeSpecNode(source string, n *yaml.Node, at string, budget *Budget) (map[string]any, Lines, Problems) {
	d := &decoder{source: source, lines: Lines{}, budget: budget}
	s, _ := SpecSchema().Field("spec")
	v := d.node(n, s, "spec")
	for i, p := range d.problems {
		if p.Path == "spec" || strings.HasPrefix(p.Path, "spec.") {
			d.problems[i].Path = at + strings.TrimPrefix(p.Path, "spec")
		}
	}
	doc := map[string]any{"apiVersion": APIVersion, "kind": KindName}
	if m, ok := v.(map[string]any); ok {
		doc["spec"] = m
	}
	return doc, d.lines, d.problems
}
