// Package fastyamltest holds fastyaml to the libraries it stands in for: the checks that
// fastyaml's own tests (odd and fuzzed inputs) and render's (every profile's chart output)
// run. Only tests import it.
package fastyamltest

import (
	"reflect"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"

	"github.com/istioctl-installer/istioctl/operator/render/internal/fastyaml"
)

// Parse says whether fastyaml.Parse read data as yaml.v3 does (fastyaml.ObjectsV3), failing
// t where it did not; fast: it read data itself.
func Parse(t testing.TB, name, data string) (fast bool) {
	t.Helper()
	want, werr := fastyaml.ObjectsV3([]byte(data))
	docs, ok := fastyaml.Parse(data)
	if !ok {
		return false
	}
	got, ok := fastyaml.AsObjects(docs)
	if !ok {
		if werr == nil {
			t.Errorf("%s: fastyaml.Parse found a document that is not an object, yaml.v3 did not", name)
		}
		return true
	}
	if werr != nil {
		t.Errorf("%s: fastyaml.Parse read what yaml.v3 rejects (%v):\n%s", name, werr, data)
		return true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: read otherwise than yaml.v3\n--- input\n%s\n--- got\n%#v\n--- want\n%#v", name, data, got, want)
	}
	return true
}

// Emit says whether fastyaml.Emit printed obj as yaml.v2 does, failing t where it did not;
// fast: it printed obj itself.
func Emit(t testing.TB, name string, obj map[string]any) (fast bool) {
	t.Helper()
	want, err := yamlv2.Marshal(obj)
	if err != nil {
		t.Fatalf("%s: yaml.v2: %v", name, err)
	}
	got, ok := fastyaml.Emit(obj)
	if !ok {
		return false
	}
	if string(got) != string(want) {
		t.Errorf("%s: printed otherwise than yaml.v2\n--- got\n%s\n--- want\n%s", name, got, want)
	}
	return true
}
