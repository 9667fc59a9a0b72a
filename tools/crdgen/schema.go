package main

import (
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/reflect/protoreflect"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// The rule every Duration field gets unless it says +protoc-gen-crd:duration-validation:none
// (istio.io/api GUIDELINES.md: a duration is non-zero by default).
var durationRule = apiextensionsv1.ValidationRule{
	Rule:    "duration(self) >= duration('1ms')",
	Message: "must be a valid duration greater than 1ms",
}

// builder turns message descriptors into structural OpenAPI v3 schemas: messages are
// objects, repeated fields arrays, maps objects with additionalProperties, enums strings
// listing their values; comments give descriptions and markers validations.
type builder struct {
	// open holds the messages being expanded, to stop on recursive types.
	open map[protoreflect.FullName]bool
}

func newBuilder() *builder {
	return &builder{open: map[protoreflect.FullName]bool{}}
}

// message is the schema of a message, without a description (the field that holds it
// gives one); ignore names validations of the message not to apply.
func (b *builder) message(md protoreflect.MessageDescriptor, ignore []string) (apiextensionsv1.JSONSchemaProps, error) {
	if s, ok := wellKnown(md.FullName()); ok {
		return s, nil
	}
	if b.open[md.FullName()] {
		// A message that contains itself cannot be a finite structural schema.
		return apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}, nil
	}
	b.open[md.FullName()] = true
	defer delete(b.open, md.FullName())

	s := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		fs, opts, err := b.field(fd)
		if err != nil {
			return s, err
		}
		s.Properties[fd.JSONName()] = fs
		if opts.altName != "" {
			s.Properties[opts.altName] = fs
		}
		if required(fd) {
			s.Required = append(s.Required, fd.JSONName())
		}
	}
	if len(s.Properties) == 0 {
		s.Properties = nil
	}
	var groups []apiextensionsv1.JSONSchemaProps
	oneofs := md.Oneofs()
	for i := 0; i < oneofs.Len(); i++ {
		od := oneofs.Get(i)
		if od.IsSynthetic() {
			continue
		}
		groups = append(groups, atMostOne(od))
	}
	switch len(groups) {
	case 0:
	case 1:
		s.OneOf = groups[0].OneOf
	default:
		s.AllOf = groups
	}
	c := parseComment(comments(md))
	var own []string
	for _, m := range c.markers {
		if isSchemaMarker(m) {
			own = append(own, m)
		}
	}
	if err := applyMarkers(string(md.FullName()), &s, own, markers.DescribesType); err != nil {
		return s, err
	}
	s.XValidations = slices.DeleteFunc(s.XValidations, func(r apiextensionsv1.ValidationRule) bool {
		return slices.Contains(ignore, r.Message)
	})
	return s, nil
}

// atMostOne says: none of the oneof's members is set, or exactly one is. Structural
// schemas allow this form (value validation only, no types).
func atMostOne(od protoreflect.OneofDescriptor) apiextensionsv1.JSONSchemaProps {
	var none apiextensionsv1.JSONSchemaProps
	var one []apiextensionsv1.JSONSchemaProps
	for i := 0; i < od.Fields().Len(); i++ {
		name := od.Fields().Get(i).JSONName()
		none.AnyOf = append(none.AnyOf, apiextensionsv1.JSONSchemaProps{Required: []string{name}})
		one = append(one, apiextensionsv1.JSONSchemaProps{Required: []string{name}})
	}
	return apiextensionsv1.JSONSchemaProps{OneOf: append([]apiextensionsv1.JSONSchemaProps{{Not: &none}}, one...)}
}

// required says whether the field is marked [(google.api.field_behavior) = REQUIRED].
func required(fd protoreflect.FieldDescriptor) bool {
	found := false
	fd.Options().(interface{ ProtoReflect() protoreflect.Message }).ProtoReflect().Range(
		func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if f.FullName() != "google.api.field_behavior" || !f.IsList() {
				return true
			}
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				if ev := f.Enum().Values().ByNumber(l.Get(i).Enum()); ev != nil && ev.Name() == "REQUIRED" {
					found = true
				}
			}
			return false
		})
	return found
}

// field is the schema of a field: its values' schema (an array or a map of them when
// repeated), its description and its markers' validations.
func (b *builder) field(fd protoreflect.FieldDescriptor) (apiextensionsv1.JSONSchemaProps, fieldOptions, error) {
	where := string(fd.FullName())
	c := parseComment(comments(fd))
	opts, err := parseFieldMarkers(where, c.markers)
	if err != nil {
		return apiextensionsv1.JSONSchemaProps{}, opts, err
	}
	var s apiextensionsv1.JSONSchemaProps
	switch {
	case fd.IsMap():
		v, err := b.value(fd.MapValue(), opts)
		if err != nil {
			return s, opts, err
		}
		if err := applyMarkers(where, &v, opts.values, markers.DescribesField); err != nil {
			return s, opts, err
		}
		s = apiextensionsv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &v}}
	case fd.IsList():
		item, err := b.value(fd, opts)
		if err != nil {
			return s, opts, err
		}
		if err := applyMarkers(where, &item, opts.items, markers.DescribesField); err != nil {
			return s, opts, err
		}
		s = apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &item}}
	default:
		if s, err = b.value(fd, opts); err != nil {
			return s, opts, err
		}
	}
	s.Description = describe(c.prose, enumOf(fd))
	if err := applyMarkers(where, &s, opts.self, markers.DescribesField); err != nil {
		return s, opts, err
	}
	return s, opts, nil
}

func enumOf(fd protoreflect.FieldDescriptor) protoreflect.EnumDescriptor {
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	return fd.Enum()
}

// value is the schema of one value of the field (an item of a list, a value of a map).
func (b *builder) value(fd protoreflect.FieldDescriptor, opts fieldOptions) (apiextensionsv1.JSONSchemaProps, error) {
	if opts.intOrString {
		return intOrString(), nil
	}
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		s, err := b.message(fd.Message(), opts.ignore)
		if err != nil {
			return s, err
		}
		if fd.Message().FullName() == "google.protobuf.Duration" && !opts.noDuration {
			s.XValidations = append(s.XValidations, durationRule)
		}
		return s, nil
	case protoreflect.EnumKind:
		values := fd.Enum().Values()
		var enum []apiextensionsv1.JSON
		for i := 0; i < values.Len(); i++ {
			enum = append(enum, apiextensionsv1.JSON{Raw: []byte(fmt.Sprintf("%q", values.Get(i).Name()))})
		}
		return apiextensionsv1.JSONSchemaProps{Type: "string", Enum: enum}, nil
	}
	return scalar(fd.Kind()), nil
}

func scalar(k protoreflect.Kind) apiextensionsv1.JSONSchemaProps {
	switch k {
	case protoreflect.BoolKind:
		return apiextensionsv1.JSONSchemaProps{Type: "boolean"}
	case protoreflect.StringKind:
		return apiextensionsv1.JSONSchemaProps{Type: "string"}
	case protoreflect.BytesKind:
		return apiextensionsv1.JSONSchemaProps{Type: "string", Format: "byte"}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return apiextensionsv1.JSONSchemaProps{Type: "integer", Format: "int32"}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return apiextensionsv1.JSONSchemaProps{Type: "integer", Minimum: ptr.To(0.0), Maximum: ptr.To(float64(math.MaxUint32))}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return apiextensionsv1.JSONSchemaProps{Type: "integer", Format: "int64"}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return apiextensionsv1.JSONSchemaProps{Type: "integer", Minimum: ptr.To(0.0)}
	case protoreflect.FloatKind:
		return apiextensionsv1.JSONSchemaProps{Type: "number", Format: "float"}
	case protoreflect.DoubleKind:
		return apiextensionsv1.JSONSchemaProps{Type: "number", Format: "double"}
	}
	panic(fmt.Sprintf("unhandled proto kind %v", k))
}

// intOrString is a field that takes an integer or a string (protojson writes 64-bit
// integers as strings).
func intOrString() apiextensionsv1.JSONSchemaProps {
	s := apiextensionsv1.JSONSchemaProps{AnyOf: []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}}
	_ = crdmarkers.XIntOrString{}.ApplyToSchema(nil, &s)
	return s
}

func nullable(s apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
	s.Nullable = true
	return s
}

// wellKnown maps the protobuf well-known types to their JSON forms.
func wellKnown(name protoreflect.FullName) (apiextensionsv1.JSONSchemaProps, bool) {
	switch name {
	case "google.protobuf.Duration":
		return apiextensionsv1.JSONSchemaProps{Type: "string"}, true
	case "google.protobuf.Timestamp":
		return apiextensionsv1.JSONSchemaProps{Type: "string", Format: "date-time"}, true
	case "google.protobuf.Struct", "google.protobuf.Any":
		return apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}, true
	case "google.protobuf.Value":
		return apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptr.To(true)}, true
	case "google.protobuf.ListValue":
		return apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{
			Schema: &apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptr.To(true)}}}, true
	case "google.protobuf.Empty":
		return apiextensionsv1.JSONSchemaProps{Type: "object"}, true
	case "google.protobuf.BoolValue":
		return nullable(scalar(protoreflect.BoolKind)), true
	case "google.protobuf.StringValue":
		return nullable(scalar(protoreflect.StringKind)), true
	case "google.protobuf.BytesValue":
		return nullable(scalar(protoreflect.BytesKind)), true
	case "google.protobuf.Int32Value":
		return nullable(scalar(protoreflect.Int32Kind)), true
	case "google.protobuf.UInt32Value":
		return nullable(scalar(protoreflect.Uint32Kind)), true
	case "google.protobuf.Int64Value":
		return nullable(scalar(protoreflect.Int64Kind)), true
	case "google.protobuf.UInt64Value":
		return nullable(scalar(protoreflect.Uint64Kind)), true
	case "google.protobuf.FloatValue":
		return nullable(scalar(protoreflect.FloatKind)), true
	case "google.protobuf.DoubleValue":
		return nullable(scalar(protoreflect.DoubleKind)), true
	}
	return apiextensionsv1.JSONSchemaProps{}, false
}
