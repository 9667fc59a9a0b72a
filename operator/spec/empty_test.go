package spec_test

import (
	"testing"

	"github.com/istioctl-installer/istioctl/operator/spec"
)

// An IstioOperator whose spec (or metadata) is present but empty sets nothing: it installs
// what the profile installs, as upstream (which installs the default profile), instead of
// wiping the profile's spec. Every such input resolves to exactly what no file resolves to.
func TestEmptySpecSections(t *testing.T) {
	def, err := spec.Resolve(spec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := spec.YAML(def.Tree)
	same := func(_ specCase, res *spec.Resolved) string {
		got, _ := spec.YAML(res.Tree)
		if string(got) == string(want) {
			return "resolves to: the default profile, unchanged\n"
		}
		return "resolves to: something else than the default profile\n"
	}
	resolveCases(t, "empty-spec.txt", []specCase{
		one("spec: with nothing under it", header+"spec:\n"),
		one("spec: null", header+"spec: null\n"),
		one("spec: ~", header+"spec: ~\n"),
		one("spec: {}", header+"spec: {}\n"),
		one("apiVersion and kind only", header),
		one("metadata only", header+"metadata:\n  namespace: istio-system\n"),
		one("metadata: and spec: both empty", header+"metadata:\nspec:\n"),
		one("an empty file", ""),
		one("comments only", "# nothing here yet\n"),
		one("a lone document separator", "---\n"),
		one("spec: empty after a comment and a separator", "# mesh\n---\n"+header+"spec:\n# to be filled in\n"),
		{name: "a later empty spec: keeps an earlier file's profile", files: map[string]string{
			"a.yaml": header + "spec:\n  profile: demo\n", "b.yaml": header + "spec:\n"}},
		one("spec: empty, profile from --set", header+"spec:\n", "profile=minimal"),
		one("components: empty: each component takes its default", header+"spec:\n  components:\n"),
		one("spec: a number", header+"spec: 5\n"),
		one("spec: a list", header+"spec: [profile]\n"),
	}, same)
}
