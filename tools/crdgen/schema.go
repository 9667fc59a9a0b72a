package main

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/reflect/protoreflect"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

// schemaFor turns a message descriptor into a structural OpenAPI v3 schema: messages are
// objects, repeated fields arrays, maps objects with additionalProperties, enums strings
// listing their values, and each oneof a constraint that at most one member is set.
func schemaFor(md protoreflect.MessageDescriptor) apiextensionsv1.JSONSchemaProps {
	return (&builder{open: map[protoreflect.FullName]bool{}}).message(md)
}

type builder struct {
	// open holds the messages being expanded, to stop on recursive types.
	open map[protoreflect.FullName]bool
}

func (b *builder) message(md protoreflect.MessageDescriptor) apiextensionsv1.JSONSchemaProps {
	if s, ok := wellKnown(md.FullName()); ok {
		return s
	}
	if b.open[md.FullName()] {
		// A message that contains itself cannot be a finite structural schema.
		return apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	}
	b.open[md.FullName()] = true
	defer delete(b.open, md.FullName())

	s := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		s.Properties[fd.JSONName()] = b.field(fd)
	}
	var groups []apiextensionsv1.JSONSchemaProps
	oneofs := md.Oneofs()
	for i := 0; i < oneofs.Len(); i++ {
		od := oneofs.Get(i)
		if od.IsSynthetic() || od.Fields().Len() < 2 {
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
	if len(s.Properties) == 0 {
		s.Properties = nil
	}
	return s
}

// atMostOne says: none of the oneof's members is set, or exactly one is. Structural
// schemas allow this form (value validation only, no types), and the apiserver reports it
// at the object's path.
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

func (b *builder) field(fd protoreflect.FieldDescriptor) apiextensionsv1.JSONSchemaProps {
	if fd.IsMap() {
		v := b.single(fd.MapValue())
		return apiextensionsv1.JSONSchemaProps{Type: "object",
			AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &v}}
	}
	if fd.IsList() {
		item := b.single(fd)
		return apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &item}}
	}
	return b.single(fd)
}

// single is the schema of one value of the field (an item of a list, a value of a map).
func (b *builder) single(fd protoreflect.FieldDescriptor) apiextensionsv1.JSONSchemaProps {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return b.message(fd.Message())
	case protoreflect.EnumKind:
		values := fd.Enum().Values()
		var enum []apiextensionsv1.JSON
		for i := 0; i < values.Len(); i++ {
			enum = append(enum, apiextensionsv1.JSON{Raw: []byte(fmt.Sprintf("%q", values.Get(i).Name()))})
		}
		return apiextensionsv1.JSONSchemaProps{Type: "string", Enum: enum}
	}
	return scalar(fd.Kind())
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
		// protojson writes 64-bit integers as strings; upstream accepts both forms.
		return intOrString()
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return apiextensionsv1.JSONSchemaProps{Type: "integer", Minimum: ptr.To(0.0)}
	case protoreflect.FloatKind:
		return apiextensionsv1.JSONSchemaProps{Type: "number", Format: "float"}
	case protoreflect.DoubleKind:
		return apiextensionsv1.JSONSchemaProps{Type: "number", Format: "double"}
	}
	panic(fmt.Sprintf("unhandled proto kind %v", k))
}

func intOrString() apiextensionsv1.JSONSchemaProps {
	return apiextensionsv1.JSONSchemaProps{
		XIntOrString: true,
		AnyOf:        []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}},
	}
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
		return nullable(intOrString()), true
	case "google.protobuf.UInt64Value":
		return nullable(scalar(protoreflect.Uint64Kind)), true
	case "google.protobuf.FloatValue":
		return nullable(scalar(protoreflect.FloatKind)), true
	case "google.protobuf.DoubleValue":
		return nullable(scalar(protoreflect.DoubleKind)), true
	}
	return apiextensionsv1.JSONSchemaProps{}, false
}
