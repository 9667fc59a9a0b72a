package render

import (
	"bytes"
	"fmt"
	"maps"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// pristine maps an object to its YAML text exactly as YAML would print it, for objects read
// from pre-rendered files and left untouched (the CRDs). Printing 15 CRDs from their
// parsed form costs more than the rest of a render; their text is already right.
var pristine sync.Map // *unstructured.Unstructured -> []byte

// crdObjects reads a pre-rendered CRD file (YAML documents separated by ---), giving each
// CRD labels (nil: its labels as written). With lazy set, each CRD is parsed only as far as its metadata (enough to sort and print it); the
// body is parsed when Materialize is called.
func crdObjects(data []byte, labels map[string]string, lazy bool) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	sep := []byte("\n---\n")
	for rest := data; len(rest) > 0; {
		// Each document keeps its closing newline, so its text is a slice of data, not a copy.
		var doc []byte
		if i := bytes.Index(rest, sep); i >= 0 {
			doc, rest = rest[:i+1:i+1], rest[i+len(sep):]
		} else {
			doc, rest = rest[:len(rest):len(rest)], nil
		}
		doc = bytes.TrimLeft(doc, "\n")
		if i := bytes.Index(doc, []byte("---\n")); i == 0 {
			doc = doc[4:]
		}
		if len(bytes.TrimSpace(doc)) == 0 || bytes.HasPrefix(bytes.TrimSpace(doc), []byte("#")) && !bytes.Contains(doc, []byte("\nkind:")) {
			continue
		}
		if doc[len(doc)-1] != '\n' {
			doc = append(doc, '\n')
		}
		obj, err := parseCRD(doc, lazy)
		if err != nil {
			return nil, err
		}
		if labels != nil && !maps.Equal(obj.GetLabels(), labels) {
			// Relabelled, the text no longer matches: parse it whole and print it anew.
			if lazy {
				if obj, err = parseCRD(doc, false); err != nil {
					return nil, err
				}
			}
			obj.SetLabels(labels)
		} else {
			pristine.Store(obj, doc)
		}
		out = append(out, obj)
	}
	return out, nil
}

func parseCRD(doc []byte, lazy bool) (*unstructured.Unstructured, error) {
	src := doc
	if lazy {
		if i := bytes.Index(doc, []byte("\nspec:")); i > 0 {
			src = doc[:i+1]
		}
	}
	objs, err := ParseObjects(src)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("want one CRD per document, got %d", len(objs))
	}
	return objs[0], nil
}

// Materialize replaces objects parsed lazily (a CRD read only as far as its metadata) by
// their whole form, in place; what applies or compares objects needs it.
func Materialize(objs []*unstructured.Unstructured) error {
	for i, o := range objs {
		if _, hasSpec := o.Object["spec"]; hasSpec || o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		raw, ok := pristine.Load(o)
		if !ok {
			continue
		}
		full, err := parseCRD(raw.([]byte), false)
		if err != nil {
			return err
		}
		pristine.Store(full, raw)
		objs[i] = full
	}
	return nil
}
