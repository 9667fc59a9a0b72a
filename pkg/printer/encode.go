package printer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	yamlnode "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// The formats of streams: one compact JSON document per line (-o json), or YAML documents
// each after a --- line (-o yaml).
const (
	jsonLine Format = "json-line"
	yamlDocs Format = "yaml-docs"
)

// stream is the stream format of f.
func stream(f Format) Format {
	if f == YAML {
		return yamlDocs
	}
	return jsonLine
}

// encoding says how a document departs from the usual encoding, as its command has always
// printed it.
type encoding struct {
	// indent is the JSON indent ("  " unless set).
	indent string
	// blankLine ends YAML with a blank line.
	blankLine bool
	// ordered keeps the structs' field order in YAML (maps' keys sorted), block style.
	ordered bool
}

// encode writes v in f (JSON, YAML or a stream's): the one place the printer encodes a
// document.
func encode(w io.Writer, f Format, v any, e encoding) error {
	var b []byte
	var err error
	switch f {
	case jsonLine:
		if b, err = json.Marshal(v); err == nil {
			b = append(b, '\n')
		}
	case JSON:
		indent := e.indent
		if indent == "" {
			indent = "  "
		}
		if b, err = json.MarshalIndent(v, "", indent); err == nil {
			b = append(b, '\n')
		}
	case YAML, yamlDocs:
		if b, err = json.Marshal(v); err != nil {
			break
		}
		if e.ordered {
			b, err = orderedYAML(b)
		} else {
			b, err = yaml.JSONToYAML(b)
		}
		if err == nil && e.blankLine {
			b = append(b, '\n')
		}
		if err == nil && f == yamlDocs {
			b = append([]byte("---\n"), b...)
		}
	default:
		return fmt.Errorf("no encoding for output format %q", f)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// orderedYAML is JSON as YAML with its fields in their order (a cluster's name before its
// IstioOperator): read as YAML nodes, in block style.
func orderedYAML(j []byte) ([]byte, error) {
	var n yamlnode.Node
	if err := yamlnode.Unmarshal(j, &n); err != nil {
		return nil, err
	}
	block(&n)
	var b bytes.Buffer
	enc := yamlnode.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

func block(n *yamlnode.Node) {
	n.Style &^= yamlnode.FlowStyle
	if n.Kind == yamlnode.ScalarNode && n.Style&yamlnode.DoubleQuotedStyle != 0 && n.Tag == "!!str" {
		// JSON quotes every string; plain is fine where YAML reads it back as the same string.
		n.Style = 0
		var back any
		if b, err := yamlnode.Marshal(n); err != nil || yamlnode.Unmarshal(b, &back) != nil || back != n.Value {
			n.Style = yamlnode.DoubleQuotedStyle
		}
	}
	for _, c := range n.Content {
		block(c)
	}
}
