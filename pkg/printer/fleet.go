package printer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	yaml "go.yaml.in/yaml/v3"

	"github.com/istioctl-installer/istioctl/operator/fleet"
)

// FleetDump prints fleet dump's result as YAML (with a line saying what it is) or JSON.
func FleetDump(w io.Writer, d *fleet.Dump, f Format) error {
	if f == JSON {
		b, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	b, err := orderedYAML(d)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# fleet %s, mesh %s: %d clusters, %d links; what each cluster gets, nothing applied\n", d.Fleet, d.MeshID, len(d.Clusters), len(d.Links))
	_, err = w.Write(b)
	return err
}

// orderedYAML is v as YAML with its structs' fields in their order (a cluster's name before
// its IstioOperator), maps' keys sorted: v's JSON, read as YAML nodes in block style.
func orderedYAML(v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(j, &n); err != nil {
		return nil, err
	}
	block(&n)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

func block(n *yaml.Node) {
	n.Style &^= yaml.FlowStyle
	if n.Kind == yaml.ScalarNode && n.Style&yaml.DoubleQuotedStyle != 0 && n.Tag == "!!str" {
		// JSON quotes every string; plain is fine where YAML reads it back as the same string.
		n.Style = 0
		var back any
		if b, err := yaml.Marshal(n); err != nil || yaml.Unmarshal(b, &back) != nil || back != n.Value {
			n.Style = yaml.DoubleQuotedStyle
		}
	}
	for _, c := range n.Content {
		block(c)
	}
}
