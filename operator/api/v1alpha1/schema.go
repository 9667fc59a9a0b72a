package v1alpha1

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
	meshv1alpha1 "istio.io/api/mesh/v1alpha1"
)

// Kind is the shape of value a schema node accepts.
type Kind int

// The kinds of schema node.
const (
	KindAny Kind = iota // anything: free-form, not checked
	KindObject
	KindMap
	KindList
	KindString
	KindInt
	KindFloat
	KindBool
	KindOpaque // a Kubernetes type with its own JSON form (Quantity, IntOrString, ...)
	KindScalar // any single value (string, number, boolean), typed as free-form values are
)

// Schema describes what a field accepts. The IstioOperator and values schemas come from Go
// types (reflection over json tags); meshConfig's from istio.io/api's protobuf descriptor.
type Schema interface {
	Kind() Kind
	// Field returns the schema of an object field.
	Field(name string) (Schema, bool)
	// FieldNames lists an object's fields, for suggestions.
	FieldNames() []string
	// Strict says an unknown object field is an error (meshConfig is lenient, as upstream).
	Strict() bool
	// Elem is the schema of list items and map values.
	Elem() Schema
	// Enum lists the accepted strings, if fixed.
	Enum() []string
	// ScalarString says any scalar is accepted and kept as its text (tag: 1.30 -> "1.30").
	ScalarString() bool
	// Duration says the string is a protobuf Duration ("5s", "0.5s").
	Duration() bool
	Deprecated() bool
	// CheckOpaque decodes a generic value into the opaque type, returning its error.
	CheckOpaque(v any) error
}

// SpecSchema is the schema of a whole IstioOperator document.
func SpecSchema() Schema { return typeSchema(reflect.TypeOf(IstioOperator{}), fieldTags{}) }

// ValuesSchema is the schema of spec.values.
func ValuesSchema() Schema {
	return goSchema{t: reflect.TypeOf(Values{}), proto: true}
}

// NumbersAsText says a number field of this section takes its number as a string too, as
// protobuf's JSON does: upstream reads meshConfig and values (protobuf messages there) that
// way, and Kubernetes-typed fields by Go's JSON, which does not.
type NumbersAsText interface{ NumbersAsText() bool }

// MeshConfigSchema is the schema of spec.meshConfig.
func MeshConfigSchema() Schema {
	return protoSchema{md: (&meshv1alpha1.MeshConfig{}).ProtoReflect().Descriptor()}
}

// ---- Go types ------------------------------------------------------------------------

type fieldTags struct {
	enum         []string
	deprecated   bool
	scalarString bool
}

type goSchema struct {
	t    reflect.Type
	tags fieldTags
	// proto says the type stands for a protobuf message of upstream's (values): see
	// NumbersAsText.
	proto bool
}

type goField struct {
	t    reflect.Type
	tags fieldTags
	sub  string // schema:"..." redirect
}

var (
	fieldCache sync.Map // reflect.Type -> map[string]goField
	jsonUnm    = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
)

func typeSchema(t reflect.Type, tags fieldTags) Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return goSchema{t: t, tags: tags}
}

func (s goSchema) Kind() Kind {
	t := s.t
	if s.tags.scalarString {
		return KindString
	}
	if reflect.PointerTo(t).Implements(jsonUnm) {
		return KindOpaque
	}
	switch t.Kind() {
	case reflect.Struct:
		return KindObject
	case reflect.Map:
		return KindMap
	case reflect.Slice, reflect.Array:
		return KindList
	case reflect.String:
		return KindString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return KindInt
	case reflect.Float32, reflect.Float64:
		return KindFloat
	case reflect.Bool:
		return KindBool
	}
	return KindAny
}

func (s goSchema) fields() map[string]goField {
	if f, ok := fieldCache.Load(s.t); ok {
		return f.(map[string]goField)
	}
	out := map[string]goField{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft)
					continue
				}
			}
			if name == "" {
				name = f.Name
			}
			gf := goField{t: f.Type, sub: f.Tag.Get("schema")}
			if e := f.Tag.Get("enum"); e != "" {
				gf.tags.enum = strings.Split(e, ",")
			}
			gf.tags.deprecated = f.Tag.Get("deprecated") == "true"
			gf.tags.scalarString = f.Tag.Get("scalar") == "string"
			out[name] = gf
		}
	}
	walk(s.t)
	fieldCache.Store(s.t, out)
	return out
}

func (s goSchema) Field(name string) (Schema, bool) {
	if s.Kind() != KindObject {
		return nil, false
	}
	f, ok := s.fields()[name]
	if !ok {
		return nil, false
	}
	switch f.sub {
	case "values":
		return ValuesSchema(), true
	case "meshconfig":
		return MeshConfigSchema(), true
	case "ztunnel":
		return ztunnelShape(), true
	case "gatewayclasses":
		return typeSchema(reflect.TypeFor[map[string]map[string]any](), fieldTags{}), true
	case "unvalidated":
		return shapeOf{ValuesSchema()}, true
	}
	return s.child(f.t, f.tags), true
}

// child is the schema of a field or element type: still protobuf-read when it is one of
// this package's values types (or a plain one), not a Kubernetes type held in values.
func (s goSchema) child(t reflect.Type, tags fieldTags) Schema {
	c := typeSchema(t, tags)
	if g, ok := c.(goSchema); ok && s.proto {
		base := t
		for base.Kind() == reflect.Pointer || base.Kind() == reflect.Slice || base.Kind() == reflect.Map {
			base = base.Elem()
		}
		g.proto = base.PkgPath() == "" || base.PkgPath() == s.t.PkgPath()
		return g
	}
	return c
}

func (s goSchema) NumbersAsText() bool { return s.proto }

func (s goSchema) FieldNames() []string {
	if s.Kind() != KindObject {
		return nil
	}
	var names []string
	for n := range s.fields() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (s goSchema) Strict() bool { return true }

func (s goSchema) Elem() Schema {
	switch s.t.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array:
		return s.child(s.t.Elem(), fieldTags{})
	}
	return anySchema{}
}

func (s goSchema) Enum() []string     { return s.tags.enum }
func (s goSchema) ScalarString() bool { return s.tags.scalarString }
func (s goSchema) Duration() bool     { return false }
func (s goSchema) Deprecated() bool   { return s.tags.deprecated }

func (s goSchema) CheckOpaque(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, reflect.New(s.t).Interface())
}

// ---- anything ------------------------------------------------------------------------

type anySchema struct{}

func (anySchema) Kind() Kind                  { return KindAny }
func (anySchema) Field(string) (Schema, bool) { return anySchema{}, true }
func (anySchema) FieldNames() []string        { return nil }
func (anySchema) Strict() bool                { return false }
func (anySchema) Elem() Schema                { return anySchema{} }
func (anySchema) Enum() []string              { return nil }
func (anySchema) ScalarString() bool          { return false }
func (anySchema) Duration() bool              { return false }
func (anySchema) Deprecated() bool            { return false }
func (anySchema) CheckOpaque(any) error       { return nil }

// ---- shapes of free-form values ------------------------------------------------------

// shapeSchema checks free-form values against the shapes a chart's defaults give them, so a
// value the chart cannot read (a list where it ranges over a map, an object where it prints
// a name) is a spec error rather than a template error: an object stays an object (its
// known keys checked alike, any other key free), a list a list, a single value a single
// value. Nothing else is checked.
type shapeSchema struct{ def any }

func (s shapeSchema) Kind() Kind {
	switch s.def.(type) {
	case map[string]any:
		return KindObject
	case []any:
		return KindList
	case nil:
		return KindAny
	}
	return KindScalar
}

func (s shapeSchema) Field(name string) (Schema, bool) {
	m, _ := s.def.(map[string]any)
	v, ok := m[name]
	if !ok {
		return nil, false
	}
	return shapeSchema{def: v}, true
}

func (s shapeSchema) FieldNames() []string {
	m, _ := s.def.(map[string]any)
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func (shapeSchema) Strict() bool          { return false }
func (shapeSchema) Elem() Schema          { return anySchema{} }
func (shapeSchema) Enum() []string        { return nil }
func (shapeSchema) ScalarString() bool    { return false }
func (shapeSchema) Duration() bool        { return false }
func (shapeSchema) Deprecated() bool      { return false }
func (shapeSchema) CheckOpaque(any) error { return nil }

// shapeOf keeps only the shapes of another schema: objects, lists and single values, any
// key allowed, any scalar type. spec.unvalidatedValues is checked so, as the values the
// charts read: unchecked names and types, but nothing a chart cannot read.
type shapeOf struct{ s Schema }

func (s shapeOf) Kind() Kind {
	switch k := s.s.Kind(); k {
	case KindObject, KindMap, KindList, KindAny:
		return k
	}
	return KindScalar
}

func (s shapeOf) Field(name string) (Schema, bool) {
	f, ok := s.s.Field(name)
	if !ok {
		return nil, false
	}
	return shapeOf{f}, true
}

func (s shapeOf) FieldNames() []string { return s.s.FieldNames() }
func (shapeOf) Strict() bool           { return false }
func (s shapeOf) Elem() Schema         { return shapeOf{s.s.Elem()} }
func (shapeOf) Enum() []string         { return nil }
func (shapeOf) ScalarString() bool     { return false }
func (shapeOf) Duration() bool         { return false }
func (shapeOf) Deprecated() bool       { return false }
func (shapeOf) CheckOpaque(any) error  { return nil }

// FreeForm is the schema of a value nothing is known of.
func FreeForm() Schema { return anySchema{} }

// ztunnel holds the shape of values.ztunnel: the ztunnel chart's defaults, which the
// caller gives (SetZtunnelDefaults): this package reads no charts.
var ztunnel struct {
	sync.Mutex
	shape Schema
}

// SetZtunnelDefaults gives values.ztunnel's shape: the ztunnel chart's defaults (its
// values.yaml's _internal_defaults_do_not_set). operator/spec gives the embedded chart's;
// until it is given, values.ztunnel is free-form.
func SetZtunnelDefaults(defaults any) {
	ztunnel.Lock()
	defer ztunnel.Unlock()
	ztunnel.shape = shapeSchema{def: defaults}
}

func ztunnelShape() Schema {
	ztunnel.Lock()
	defer ztunnel.Unlock()
	if ztunnel.shape == nil {
		return FreeForm()
	}
	return ztunnel.shape
}

// ---- protobuf (meshConfig) -------------------------------------------------------------

type protoSchema struct {
	md protoreflect.MessageDescriptor
	fd protoreflect.FieldDescriptor // nil for a whole message
	// elem is true when this node is one element of a repeated/map field.
	elem bool
}

func (s protoSchema) kindOf(fd protoreflect.FieldDescriptor) Kind {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		switch fd.Message().FullName() {
		case "google.protobuf.Duration", "google.protobuf.Timestamp", "google.protobuf.StringValue", "google.protobuf.BytesValue":
			return KindString
		case "google.protobuf.BoolValue":
			return KindBool
		case "google.protobuf.Int32Value", "google.protobuf.UInt32Value", "google.protobuf.Int64Value", "google.protobuf.UInt64Value":
			return KindInt
		case "google.protobuf.DoubleValue", "google.protobuf.FloatValue":
			return KindFloat
		case "google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.Any", "google.protobuf.ListValue":
			return KindAny
		}
		return KindObject
	case protoreflect.BoolKind:
		return KindBool
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.EnumKind:
		return KindString
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return KindFloat
	}
	return KindInt
}

func (s protoSchema) Kind() Kind {
	if s.fd == nil {
		return KindObject
	}
	if !s.elem {
		if s.fd.IsMap() {
			return KindMap
		}
		if s.fd.IsList() {
			return KindList
		}
	}
	if s.fd.IsMap() {
		return s.kindOf(s.fd.MapValue())
	}
	return s.kindOf(s.fd)
}

func (s protoSchema) message() protoreflect.MessageDescriptor {
	if s.fd == nil {
		return s.md
	}
	if s.fd.IsMap() {
		return s.fd.MapValue().Message()
	}
	return s.fd.Message()
}

func (s protoSchema) Field(name string) (Schema, bool) {
	if s.Kind() != KindObject {
		return nil, false
	}
	md := s.message()
	fd := md.Fields().ByJSONName(name)
	if fd == nil {
		fd = md.Fields().ByName(protoreflect.Name(name))
	}
	if fd == nil {
		return nil, false
	}
	return protoSchema{md: md, fd: fd}, true
}

func (s protoSchema) FieldNames() []string {
	if s.Kind() != KindObject {
		return nil
	}
	fs := s.message().Fields()
	names := make([]string, 0, fs.Len())
	for i := 0; i < fs.Len(); i++ {
		names = append(names, fs.Get(i).JSONName())
	}
	sort.Strings(names)
	return names
}

func (s protoSchema) Strict() bool { return false }

func (s protoSchema) Elem() Schema {
	if s.fd == nil || s.elem {
		return anySchema{}
	}
	return protoSchema{md: s.md, fd: s.fd, elem: true}
}

func (s protoSchema) Enum() []string {
	if s.fd == nil || (!s.elem && (s.fd.IsList() || s.fd.IsMap())) {
		return nil
	}
	fd := s.fd
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	if fd.Kind() != protoreflect.EnumKind {
		return nil
	}
	vs := fd.Enum().Values()
	out := make([]string, 0, vs.Len())
	for i := 0; i < vs.Len(); i++ {
		out = append(out, string(vs.Get(i).Name()))
	}
	return out
}

// enumNumbers is a schema whose enum values also have numbers (protobuf's).
type enumNumbers interface {
	// EnumNumber is text as the number of one of the enum's values, if it is one.
	EnumNumber(text string) (int64, bool)
}

func (s protoSchema) EnumNumber(text string) (int64, bool) {
	if len(s.Enum()) == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(text, 10, 32)
	if err != nil {
		return 0, false
	}
	fd := s.fd
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	if fd.Enum().Values().ByNumber(protoreflect.EnumNumber(n)) == nil {
		return 0, false
	}
	return n, true
}

func (s protoSchema) ScalarString() bool { return false }

func (s protoSchema) Duration() bool {
	if s.fd == nil || (!s.elem && (s.fd.IsList() || s.fd.IsMap())) {
		return false
	}
	fd := s.fd
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	return fd.Kind() == protoreflect.MessageKind && fd.Message().FullName() == "google.protobuf.Duration"
}

func (s protoSchema) Deprecated() bool {
	if s.fd == nil {
		return false
	}
	opts, ok := s.fd.Options().(interface{ GetDeprecated() bool })
	return ok && opts.GetDeprecated()
}

func (s protoSchema) CheckOpaque(any) error { return nil }

func (s protoSchema) NumbersAsText() bool { return true }

// kindName is how errors name what a field wants.
func kindName(k Kind) string {
	switch k {
	case KindObject, KindMap:
		return "an object"
	case KindList:
		return "a list"
	case KindString:
		return "a string"
	case KindInt:
		return "an integer"
	case KindFloat:
		return "a number"
	case KindBool:
		return "true or false"
	case KindScalar:
		return "a single value (a string, number or boolean)"
	}
	return fmt.Sprintf("kind %d", k)
}

// ImageFields lists the values (dotted paths below spec.values) image references are made
// of, as the charts make them: <hub>/<image>:<tag>[-<variant>], an image holding a "/" used
// as it is. They are every hub, tag, image and variant field of the values schema, and of
// the ztunnel chart's values.
var ImageFields = sync.OnceValue(func() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		// Kubernetes types (a Container's image) are checked as the apiserver would.
		if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeFor[Values]().PkgPath() {
			return
		}
		fields := goSchema{t: t}.fields()
		for _, name := range (goSchema{t: t}).FieldNames() {
			if isImagePart(name) {
				out = append(out, prefix+name)
				continue
			}
			walk(fields[name].t, prefix+name+".")
		}
	}
	walk(reflect.TypeFor[Values](), "")
	for _, name := range ztunnelShape().FieldNames() {
		if isImagePart(name) {
			out = append(out, "ztunnel."+name)
		}
	}
	sort.Strings(out)
	return out
})

func isImagePart(name string) bool {
	switch name {
	case "hub", "tag", "image", "variant":
		return true
	}
	return false
}
