// Package rendertest resolves a spec from --set flags and renders it, for the unit tests of
// the packages that judge rendered objects (images, check, skew, render itself).
package rendertest

import (
	"testing"

	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Sets resolves sets (as --set flags) and renders every component of the result with the
// embedded charts, failing the test on an error.
func Sets(t testing.TB, sets ...string) (*spec.Resolved, []render.Manifest) {
	t.Helper()
	res, _, ms := SetsWith(t, sets...)
	return res, ms
}

// SetsWith is Sets that also returns the renderer, for tests that render more with it.
func SetsWith(t testing.TB, sets ...string) (*spec.Resolved, *render.Renderer, []render.Manifest) {
	t.Helper()
	res, err := spec.Resolve(spec.Options{Sets: sets})
	if err != nil {
		t.Fatal(err)
	}
	r, err := render.NewRenderer("")
	if err != nil {
		t.Fatal(err)
	}
	ms, _, err := r.Render(res)
	if err != nil {
		t.Fatal(err)
	}
	return res, r, ms
}
