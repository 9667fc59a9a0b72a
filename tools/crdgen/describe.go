package main

import (
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// hideFromDocs in a comment keeps the field out of the documentation, and so out of the
// descriptions.
const hideFromDocs = "$hide_from_docs"

// describe is a field's description: the first sentence of its comment (markers left out,
// lines joined), and for an enum the values a user may set.
func describe(prose []string, enum protoreflect.EnumDescriptor) string {
	var words []string
	for _, line := range prose {
		if strings.HasPrefix(line, hideFromDocs) {
			return ""
		}
	}
	for _, line := range prose {
		words = append(words, strings.Fields(line)...)
	}
	// The first sentence: up to the first period that ends a word. A comment with no
	// such period (a fragment like "Valid port number") gives none.
	text := strings.Join(words, " ")
	if i := strings.Index(text+" ", ". "); i >= 0 {
		text = text[:i+1]
	} else {
		text = ""
	}
	if enum == nil {
		return text
	}
	var valid []string
	values := enum.Values()
	for i := 0; i < values.Len(); i++ {
		if name := string(values.Get(i).Name()); !unsetValue(name) {
			valid = append(valid, name)
		}
	}
	return text + "\n\nValid Options: " + strings.Join(valid, ", ")
}

// unsetValue says whether an enum value stands for "not set" (UNSPECIFIED, UNSET, ...):
// the schema accepts it, the description does not offer it.
func unsetValue(name string) bool {
	switch name {
	case "UNSPECIFIED", "UNSET", "UNDEFINED", "INVALID":
		return true
	}
	return strings.HasPrefix(name, "UNSPECIFIED_")
}
