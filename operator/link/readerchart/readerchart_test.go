package readerchart

import (
	"strings"
	"testing"
)

// TestRender: the embedded charts render the reader's ServiceAccount first, then its roles
// and bindings, in the namespace asked for, labelled for a later install to adopt.
func TestRender(t *testing.T) {
	r, err := Render("", "istio-remote", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	names := strings.Join(r.Names(), " ")
	if !strings.HasPrefix(names, "ServiceAccount/istio-remote/istio-reader-service-account ") || len(r.Bindings()) == 0 || len(r.Access()) == 0 {
		t.Fatalf("reader %s: want its ServiceAccount first, bindings and access", names)
	}
	for _, o := range r.Objects {
		if o.GetKind() == "ServiceAccount" && o.GetNamespace() != "istio-remote" {
			t.Errorf("%s in %q, want istio-remote", o.GetName(), o.GetNamespace())
		}
		if len(o.GetLabels()) == 0 {
			t.Errorf("%s/%s has no labels", o.GetKind(), o.GetName())
		}
	}
}

// TestRenderOnce: a second Render of the same reader is the first's, as a copy the caller
// may change.
func TestRenderOnce(t *testing.T) {
	a, err := Render("", "istio-once", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	a.Objects[0].SetName("changed")
	b, err := Render("", "istio-once", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Objects[0].GetName(); got != "istio-reader-service-account" {
		t.Fatalf("the second render's ServiceAccount is %q: the first caller's change reached it", got)
	}
	if len(a.Objects) != len(b.Objects) {
		t.Fatalf("%d objects, then %d", len(a.Objects), len(b.Objects))
	}
	if _, ok := rendered.m[[2]string{"istio-once", "1.0.0"}]; !ok {
		t.Fatal("the reader was not kept")
	}
}
