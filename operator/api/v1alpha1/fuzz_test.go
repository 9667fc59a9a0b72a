package v1alpha1

import (
	"strings"
	"testing"
)

// FuzzDecodeFile decodes arbitrary bytes as a spec file: problems are fine, panics are not,
// and every problem names its source.
func FuzzDecodeFile(f *testing.F) {
	f.Add([]byte("apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  profile: demo\n"))
	f.Add([]byte("apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  meshConfig:\n    defaultConfig:\n      drainDuration: 5s\n"))
	f.Add([]byte("spec:\n  components:\n    pilot:\n      k8s:\n        resources: {requests: {cpu: 1m}}\n"))
	f.Add([]byte("a: &x [1, 2]\nb: *x\n<<: {c: 1}\n"))
	f.Add([]byte("\t- bad"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, ps := DecodeFile("fuzz.yaml", data)
		for _, p := range ps {
			if p.Source != "fuzz.yaml" {
				t.Fatalf("problem without its source: %#v", p)
			}
		}
	})
}

func TestAliasBomb(t *testing.T) {
	doc := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h"} {
		doc += n + ": &" + n + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
		prev = n
	}
	doc = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  unvalidatedValues:\n    " + strings.ReplaceAll(strings.TrimSpace(doc), "\n", "\n    ") + "\n"
	_, _, ps := DecodeFile("bomb.yaml", []byte(doc))
	if len(ps) == 0 || !strings.Contains(ps.Error(), "expands to more than") {
		t.Fatalf("want the expansion limit, got %v", ps)
	}
}
