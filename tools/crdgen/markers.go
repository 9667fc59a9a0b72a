package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// The +kubebuilder markers (and +listType, +listMapKey) are controller-tools' vocabulary:
// its registry parses them and applies them to a schema, so they mean here what they mean
// for every CRD generated from Go types.
var registry = func() *markers.Registry {
	reg := &markers.Registry{}
	if err := crdmarkers.Register(reg); err != nil {
		panic(err)
	}
	return reg
}()

// Istio's own markers (GUIDELINES.md of istio.io/api): a validation applied to each item of
// a list or each value of a map, and field options of the generator.
const (
	listValueMarker  = "+protoc-gen-crd:list-value-validation:"
	mapValueMarker   = "+protoc-gen-crd:map-value-validation:"
	intOrStringMark  = "+protoc-gen-crd:validation:XIntOrString"
	noDurationMarker = "+protoc-gen-crd:duration-validation:none"
	ignoreSubMarker  = "+protoc-gen-crd:validation:IgnoreSubValidation:"
	altNameMarker    = "+kubebuilder:altName="
	cueGenMarker     = "+cue-gen:"
)

// Markers of Go code generation (client, deepcopy, patch strategy): nothing to do with the
// schema.
var codegenMarkers = []string{"+optional", "+patchMergeKey", "+patchStrategy", "+genclient", "+k8s:", "+kubetype-gen"}

// comment is a declaration's leading comment cut into its prose and its markers.
type comment struct {
	prose   []string
	markers []string
}

// parseComment splits a comment into prose lines and marker lines (those starting with +).
// A marker whose quoted value runs over several lines is joined into one, as the printer
// columns' descriptions are written.
func parseComment(text string) comment {
	var c comment
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(line, "+") {
			c.prose = append(c.prose, line)
			continue
		}
		for openQuote(line) && i+1 < len(lines) {
			i++
			line += " " + strings.TrimSpace(lines[i])
		}
		c.markers = append(c.markers, line)
	}
	return c
}

// openQuote says whether a marker has an unclosed double-quoted value.
func openQuote(s string) bool {
	open := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && open:
			i++
		case s[i] == '"':
			open = !open
		}
	}
	return open
}

// fieldOptions are what a field's markers say beyond schema validations.
type fieldOptions struct {
	altName     string
	intOrString bool
	noDuration  bool
	// ignore names the validation messages of the field's message type not to apply here.
	ignore []string
	// self, items and values are the validations for the field itself, each item of a
	// list and each value of a map.
	self, items, values []string
}

func parseFieldMarkers(where string, ms []string) (fieldOptions, error) {
	var o fieldOptions
	for _, m := range ms {
		switch {
		case strings.HasPrefix(m, altNameMarker):
			o.altName = strings.TrimPrefix(m, altNameMarker)
		case m == intOrStringMark:
			o.intOrString = true
		case m == noDurationMarker:
			o.noDuration = true
		case strings.HasPrefix(m, ignoreSubMarker):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(m, ignoreSubMarker)), &o.ignore); err != nil {
				return o, fmt.Errorf("%s: %s: %w", where, m, err)
			}
		case strings.HasPrefix(m, listValueMarker):
			o.items = append(o.items, "+kubebuilder:validation:"+strings.TrimPrefix(m, listValueMarker))
		case strings.HasPrefix(m, mapValueMarker):
			o.values = append(o.values, "+kubebuilder:validation:"+strings.TrimPrefix(m, mapValueMarker))
		case strings.HasPrefix(m, cueGenMarker) && strings.HasSuffix(m, ":releaseChannel:extended"):
			// Which release channel a field belongs to: the file holds every channel.
		case isSchemaMarker(m):
			o.self = append(o.self, m)
		case isCodegenMarker(m):
		default:
			return o, fmt.Errorf("%s: unknown marker %s", where, m)
		}
	}
	return o, nil
}

func isSchemaMarker(m string) bool {
	return strings.HasPrefix(m, "+kubebuilder:") || strings.HasPrefix(m, "+listType") || strings.HasPrefix(m, "+listMapKey")
}

func isCodegenMarker(m string) bool {
	for _, p := range codegenMarkers {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// quoteRule re-quotes the rule of an XValidation marker whose rule holds bare double quotes
// (rule="default(self.a, "").size() > 0"): the rule runs to the marker's last quote, as
// the API's own generator reads it, and controller-tools' parser wants it escaped.
func quoteRule(m string) string {
	i := strings.Index(m, `rule="`)
	if !strings.Contains(m, ":XValidation:") || i < 0 || !strings.HasSuffix(m, `"`) {
		return m
	}
	raw := m[i+len(`rule="`) : len(m)-1]
	if !strings.Contains(strings.ReplaceAll(raw, `\"`, ""), `"`) {
		return m
	}
	return m[:i] + "rule=" + strconv.Quote(raw)
}

// schemaApplier is a parsed controller-tools marker that changes a schema.
type schemaApplier interface {
	ApplyToSchema(*crdmarkers.SchemaContext, *apiextensionsv1.JSONSchemaProps) error
}

// applyMarkers applies schema markers to s in controller-tools' order (by each marker's
// priority, then as written).
func applyMarkers(where string, s *apiextensionsv1.JSONSchemaProps, ms []string, target markers.TargetType) error {
	type parsed struct {
		prio crdmarkers.ApplyPriority
		val  schemaApplier
		raw  string
	}
	var all []parsed
	for _, m := range ms {
		m = quoteRule(m)
		def := registry.Lookup(m, target)
		if def == nil {
			return fmt.Errorf("%s: unknown marker %s", where, m)
		}
		v, err := def.Parse(m)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", where, m, err)
		}
		if x, ok := v.(crdmarkers.XValidation); ok {
			if x.Rule, err = expandRule(x.Rule); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			v = x
		}
		a, ok := v.(schemaApplier)
		if !ok {
			return fmt.Errorf("%s: %s does not change a schema", where, m)
		}
		p := crdmarkers.ApplyPriorityDefault
		if pm, ok := v.(crdmarkers.ApplyPriorityMarker); ok {
			p = pm.ApplyPriority()
		}
		all = append(all, parsed{p, a, m})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].prio < all[j].prio })
	for _, p := range all {
		if err := p.val.ApplyToSchema(&crdmarkers.SchemaContext{}, s); err != nil {
			return fmt.Errorf("%s: %s: %w", where, p.raw, err)
		}
	}
	return nil
}
