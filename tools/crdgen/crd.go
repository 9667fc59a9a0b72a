package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gobuffalo/flect"
	"google.golang.org/protobuf/reflect/protoreflect"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// crdSpec is what a message's +cue-gen:<Kind>:<key>:<value> markers say about its CRD.
type crdSpec struct {
	Kind, Group, Plural string
	// Versions as the marker lists them; the first is the storage version.
	Versions     []string
	ShortNames   []string
	Categories   []string
	Annotations  map[string]string
	Scope        string
	Status       bool
	SpecRequired bool
	// Preserve lists the paths under spec (a.b.[].c) that keep unknown fields.
	Preserve []string
	Columns  []apiextensionsv1.CustomResourceColumnDefinition
	Message  protoreflect.MessageDescriptor
}

// crdOf reads a message's CRD markers; ok is false for a message that declares no CRD.
func crdOf(md protoreflect.MessageDescriptor) (c crdSpec, ok bool, err error) {
	c = crdSpec{Kind: string(md.Name()), Message: md, Annotations: map[string]string{}}
	prefix := cueGenMarker + c.Kind + ":"
	for _, m := range parseComment(comments(md)).markers {
		if !strings.HasPrefix(m, cueGenMarker) {
			continue
		}
		rest, mine := strings.CutPrefix(m, prefix)
		if !mine {
			// A marker naming another kind (a copy-paste slip in the API): only the
			// release channel, which does not change the file, is let through.
			if strings.HasSuffix(m, ":releaseChannel:extended") {
				continue
			}
			return c, false, fmt.Errorf("%s: marker %s names another kind", md.FullName(), m)
		}
		key, val, _ := strings.Cut(rest, ":")
		if err := c.set(key, val); err != nil {
			return c, false, fmt.Errorf("%s: %s: %w", md.FullName(), m, err)
		}
		ok = true
	}
	if !ok {
		return c, false, nil
	}
	if c.Group == "" || len(c.Versions) == 0 {
		return c, false, fmt.Errorf("%s: CRD markers without groupName or versions", md.FullName())
	}
	if c.Plural == "" {
		c.Plural = flect.Pluralize(strings.ToLower(c.Kind))
	}
	return c, true, nil
}

func (c *crdSpec) set(key, val string) error {
	switch key {
	case "groupName":
		c.Group = val
	case "versions":
		c.Versions = strings.Split(val, ",")
	case "storageVersion":
		// The storage version is the first of versions.
	case "annotations":
		for k, v := range keyValues(val) {
			c.Annotations[k] = strings.Join(v, ",")
		}
	case "labels":
		// The file carries the base chart's labels instead (see newCRD).
	case "subresource":
		if val != "status" {
			return fmt.Errorf("unknown subresource %q", val)
		}
		c.Status = true
	case "scope":
		c.Scope = val
	case "resource":
		kv := keyValues(val)
		c.Categories, c.ShortNames = kv["categories"], kv["shortNames"]
		if p := kv["plural"]; len(p) > 0 {
			c.Plural = p[0]
		}
	case "printerColumn":
		kv := keyValues(val)
		c.Columns = append(c.Columns, apiextensionsv1.CustomResourceColumnDefinition{
			Name: first(kv["name"]), Type: first(kv["type"]), JSONPath: first(kv["JSONPath"]),
			Description: strings.Trim(strings.Join(kv["description"], ","), `"`),
		})
	case "preserveUnknownFields":
		if val != "false" {
			c.Preserve = append(c.Preserve, val)
		}
	case "spec":
		if val != "required" {
			return fmt.Errorf("unknown spec option %q", val)
		}
		c.SpecRequired = true
	case "releaseChannel":
		// The file holds every release channel.
	default:
		return fmt.Errorf("unknown key %q", key)
	}
	return nil
}

// keyValues reads "a=x,y,b=z" as a: [x y], b: [z]: a comma starts a new key only when the
// next word has an = (outside quotes).
func keyValues(s string) map[string][]string {
	out := map[string][]string{}
	key := ""
	for _, part := range splitOutsideQuotes(s) {
		if k, v, ok := strings.Cut(part, "="); ok && !strings.Contains(k, `"`) {
			key = k
			out[key] = append(out[key], v)
		} else if key != "" {
			out[key] = append(out[key], part)
		}
	}
	return out
}

func splitOutsideQuotes(s string) []string {
	var out []string
	start, open := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			open = !open
		case ',':
			if !open {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// newCRD assembles a CRD: every version serves the same schema (Istio's API has no
// conversion), the first listed is stored.
func newCRD(c crdSpec, spec, status apiextensionsv1.JSONSchemaProps, labels map[string]string) (*apiextensionsv1.CustomResourceDefinition, error) {
	root := apiextensionsv1.JSONSchemaProps{
		Type:       "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": spec, "status": status},
	}
	if c.SpecRequired {
		root.Required = []string{"spec"}
	}
	for _, p := range c.Preserve {
		if err := preserveAt(&root, "spec."+p); err != nil {
			return nil, fmt.Errorf("%s: preserveUnknownFields %s: %w", c.Kind, p, err)
		}
	}
	obj := &apiextensionsv1.CustomResourceDefinition{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        c.Plural + "." + c.Group,
			Labels:      labels,
			Annotations: c.Annotations,
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: c.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: c.Kind, ListKind: c.Kind + "List", Plural: c.Plural, Singular: strings.ToLower(c.Kind),
				ShortNames: c.ShortNames, Categories: c.Categories,
			},
			Scope: apiextensionsv1.ResourceScope(c.Scope),
		},
	}
	for i, v := range c.Versions {
		schema := root
		ver := apiextensionsv1.CustomResourceDefinitionVersion{
			Name: v, Served: true, Storage: i == 0,
			Schema:                   &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &schema},
			AdditionalPrinterColumns: c.Columns,
		}
		if c.Status {
			ver.Subresources = &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
		}
		obj.Spec.Versions = append(obj.Spec.Versions, ver)
	}
	sort.Slice(obj.Spec.Versions, func(i, j int) bool { return obj.Spec.Versions[i].Name < obj.Spec.Versions[j].Name })
	return obj, nil
}

// preserveAt marks the schema at path (dot-separated property names, [] for a list's
// items) as keeping unknown fields.
func preserveAt(s *apiextensionsv1.JSONSchemaProps, path string) error {
	for _, step := range strings.Split(path, ".") {
		if step == "[]" {
			if s.Items == nil || s.Items.Schema == nil {
				return fmt.Errorf("%s is not a list", step)
			}
			s = s.Items.Schema
			continue
		}
		child, ok := s.Properties[step]
		if !ok {
			return fmt.Errorf("no property %s", step)
		}
		// Properties holds values: change a copy and put it back on the way down.
		defer func(parent *apiextensionsv1.JSONSchemaProps, name string, c *apiextensionsv1.JSONSchemaProps) {
			parent.Properties[name] = *c
		}(s, step, &child)
		s = &child
	}
	s.XPreserveUnknownFields = ptr.To(true)
	return nil
}
