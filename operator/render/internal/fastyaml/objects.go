package fastyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	yaml "go.yaml.in/yaml/v3"
)

// Objects are the objects of a multi-document YAML text (chart output), as yaml.v3 reads
// them: read by Parse where it reads every document as an object, else by yaml.v3
// (ObjectsV3), which then says what is wrong. Null and empty documents are left out.
func Objects(text string) ([]map[string]any, error) {
	if docs, ok := Parse(text); ok {
		if out, ok := AsObjects(docs); ok {
			return out, nil
		}
	}
	return ObjectsV3([]byte(text))
}

// AsObjects are Parse's documents as objects, null and empty ones left out; false when one
// is not an object with a kind and an apiVersion (ObjectsV3 then says which).
func AsObjects(docs []any) ([]map[string]any, bool) {
	var out []map[string]any
	for _, v := range docs {
		if v == nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if len(m) == 0 {
			continue
		}
		if !typed(m) {
			return nil, false
		}
		out = append(out, m)
	}
	return out, true
}

// ObjectsV3 is Objects read by yaml.v3 alone: the reader Parse is held to.
func ObjectsV3(data []byte) ([]map[string]any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []map[string]any
	for doc := 1; ; doc++ {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		m, ok := JSONValue(v).(map[string]any)
		if !ok {
			return nil, fmt.Errorf("document %d is not an object", doc)
		}
		if len(m) == 0 {
			continue
		}
		if !typed(m) {
			return nil, fmt.Errorf("document %d: object without kind or apiVersion", doc)
		}
		out = append(out, m)
	}
}

// typed says m has a kind and an apiVersion, as strings (what an object must name).
func typed(m map[string]any) bool {
	kind, _ := m["kind"].(string)
	apiVersion, _ := m["apiVersion"].(string)
	return kind != "" && apiVersion != ""
}
