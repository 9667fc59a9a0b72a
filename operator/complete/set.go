package complete

import (
	"sort"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Profiles lists the profile names of the built-in set, or of manifestsDir's profiles/.
func Profiles(manifestsDir string) []string {
	p, err := spec.NewProfiles(manifestsDir)
	if err != nil {
		return nil
	}
	names, _ := p.Names()
	return names
}

// SetPaths completes one --set word by walking the spec's schema: the spec's fields
// (profile=, revision=, components., values., meshConfig., ...), the fields below an object
// ("values.global." -> "values.global.hub=", "values.global.proxy.", ...), and after "="
// the profiles for profile, the cluster's revisions for revision (asked only then), an
// enum's values and true/false. final says the candidates are whole values, so the shell
// may end the word; otherwise they are paths to go on typing.
func SetPaths(word string, profiles []string, revisions func() []string) (candidates []string, final bool) {
	if strings.ContainsAny(word, `\`) {
		return nil, false // escaped dots: past what a schema walk can tell
	}
	root, _ := v1alpha1.SpecSchema().Field("spec")
	if key, prefix, ok := strings.Cut(word, "="); ok {
		var values []string
		switch s := walk(root, key); {
		case key == "profile":
			values = profiles
		case key == "revision":
			values = revisions()
		case s == nil:
		case len(s.Enum()) > 0:
			values = s.Enum()
		case s.Kind() == v1alpha1.KindBool:
			values = []string{"true", "false"}
		}
		for _, v := range values {
			if strings.HasPrefix(v, prefix) {
				candidates = append(candidates, key+"="+v)
			}
		}
		return candidates, true
	}
	parent, partial := "", word
	if i := strings.LastIndex(word, "."); i >= 0 {
		parent, partial = word[:i+1], word[i+1:]
	}
	s := walk(root, strings.TrimSuffix(parent, "."))
	if s == nil || s.Kind() != v1alpha1.KindObject {
		return nil, false
	}
	for _, name := range s.FieldNames() {
		f, _ := s.Field(name)
		if !strings.HasPrefix(name, partial) || f.Deprecated() {
			continue
		}
		candidates = append(candidates, parent+name+next(f))
	}
	sort.Strings(candidates)
	return candidates, false
}

// next is what follows a field's name in a path: "." into an object or map, "[0]." into a
// list of objects, "=" for a value.
func next(s v1alpha1.Schema) string {
	switch s.Kind() {
	case v1alpha1.KindObject, v1alpha1.KindMap:
		return "."
	case v1alpha1.KindList:
		if s.Elem() != nil && s.Elem().Kind() == v1alpha1.KindObject {
			return "[0]."
		}
	}
	return "="
}

// walk follows a dotted path ("values.global", "components.ingressGateways[0].k8s") from s;
// nil where the schema cannot follow (an unknown field, free-form values).
func walk(s v1alpha1.Schema, path string) v1alpha1.Schema {
	if path == "" {
		return s
	}
	for _, seg := range strings.Split(path, ".") {
		name, index, list := strings.Cut(seg, "[")
		switch {
		case s == nil:
			return nil
		case s.Kind() == v1alpha1.KindObject:
			f, ok := s.Field(name)
			if !ok {
				return nil
			}
			s = f
		case s.Kind() == v1alpha1.KindMap:
			s = s.Elem()
		default:
			return nil
		}
		if list {
			if s == nil || s.Kind() != v1alpha1.KindList || !strings.HasSuffix(index, "]") {
				return nil
			}
			s = s.Elem()
		}
	}
	return s
}
