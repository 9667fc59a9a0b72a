package render_test

import (
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// imageSets are the --set paths of every image part: spec, a component of each kind, and
// every image field of the values (the same paths under unvalidatedValues win over them).
func imageSets() []string {
	sets := []string{"hub", "tag", "components.pilot.hub", "components.pilot.tag", "components.cni.hub", "components.cni.tag",
		"components.ztunnel.hub", "components.ztunnel.tag", "components.ingressGateways[0].hub", "components.ingressGateways[0].tag"}
	for _, p := range v1alpha1.ImageFields() {
		sets = append(sets, "values."+p, "unvalidatedValues."+p)
	}
	return sets
}

// Every image part, left empty, either is refused when the spec resolves (naming the field)
// or renders only valid image references (an empty component-level part falls back to the
// global one): what the spec check lets through, the charts turn into pullable images.
// And every image part given a value no reference can hold is refused, naming the field.
// This pins the spec check to what the charts do with each field.
func TestEveryImagePartIsCheckedWhereItIsSet(t *testing.T) {
	r, err := render.NewRenderer("")
	if err != nil {
		t.Fatal(err)
	}
	// Every component (and its image) on.
	base := []string{"profile=ambient", "components.ingressGateways[0].enabled=true", "values.cni.repair.enabled=true"}
	var accepted []string
	for _, set := range imageSets() {
		if _, err := spec.Resolve(spec.Options{Sets: append(base, set+"=")}); err == nil {
			accepted = append(accepted, set+"=")
		} else if !strings.Contains(err.Error(), "is empty: images would be") {
			t.Errorf("%s=: %v", set, err)
		}
		_, err := spec.Resolve(spec.Options{Sets: append(base, set+"=Not A Reference")})
		if err == nil || !strings.Contains(err.Error(), "spec."+set+": ") {
			t.Errorf("%s=Not A Reference: want an error naming spec.%s, got %v", set, set, err)
		}
	}
	// The accepted empty parts fall back independently: one render holds them all (and
	// on failure, one each says which).
	render := func(sets []string) error {
		res, err := spec.Resolve(spec.Options{Sets: append(base, sets...)})
		if err != nil {
			return err
		}
		_, _, err = r.Render(res)
		return err
	}
	if err := render(accepted); err != nil {
		for _, set := range accepted {
			if err := render([]string{set}); err != nil {
				t.Errorf("%s is accepted, but renders an invalid image: %v", set, err)
			}
		}
	}
	if len(accepted) < 20 {
		t.Errorf("only %d empty image parts accepted: %v", len(accepted), accepted)
	}
}

// An image that only the rendered objects show (here an overlay's) is checked too.
func TestRenderedImagesAreValid(t *testing.T) {
	res, err := spec.Resolve(spec.Options{Sets: []string{
		"components.pilot.k8s.overlays[0].kind=Deployment", "components.pilot.k8s.overlays[0].name=istiod",
		"components.pilot.k8s.overlays[0].patches[0].path=spec.template.spec.containers.[name:discovery].image",
		"components.pilot.k8s.overlays[0].patches[0].value=/pilot:1.30.0",
	}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := render.NewRenderer("")
	_, _, err = r.Render(res)
	const want = `rendering Pilot: Deployment istiod, container discovery: image "/pilot:1.30.0" is not a valid image reference`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %v, want it to start %q", err, want)
	}
}
