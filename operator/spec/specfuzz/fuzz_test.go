// Package specfuzz holds operator/spec's fuzz targets, apart from spec's own tests: a fuzz
// build instruments every package its test binary links, and spec's tests import
// operator/render (Helm, sprig), which its decoders never reach. Here the binary links
// spec and what spec imports, nothing more (docs/development.md, "Fuzz targets").
package specfuzz

import (
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/spec"
)

// FuzzSetFlag feeds arbitrary --set strings through parsing and resolution on the default
// profile: they may be rejected, never crash; an accepted path prints back to one that
// parses to the same thing, and a spec they resolve to dumps to YAML that resolves to the
// same dump.
func FuzzSetFlag(f *testing.F) {
	for _, s := range []string{
		"profile=demo", "values.global.hub=x", `a\.b.c=1`, "components.ingressGateways[0].enabled=true",
		"components.ingressGateways[name:istio-ingressgateway].k8s.replicaCount=2", "a[:x]=y", "x=",
		"[0]=1", "a.[0].[1]=2", "meshConfig.defaultConfig.proxyMetadata.X=1.0", "values=1", "a[", "]=",
		"unvalidatedValues.x[0]=1", "components.pilot.k8s.resources.requests.cpu=1m",
		"meshConfig.defaultConfig.proxyMetadata.X=a\u0085\u0099\uffff\x7f",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		sf, err := spec.ParseSetFlag(raw)
		if err != nil {
			return
		}
		again, err := spec.ParsePath(sf.Path.String())
		if err != nil {
			t.Fatalf("path %q prints as %q, which does not parse: %v", raw, sf.Path.String(), err)
		}
		if again.String() != sf.Path.String() {
			t.Fatalf("path %q: %q reparses as %q", raw, sf.Path.String(), again.String())
		}
		res, err := spec.Resolve(spec.Options{Sets: []string{raw}})
		if err != nil {
			return
		}
		stable(t, res.Tree)
	})
}

// FuzzResolveFile resolves arbitrary spec files: errors are fine, panics are not, and a
// spec that resolves dumps to YAML that resolves to the same dump.
func FuzzResolveFile(f *testing.F) {
	f.Add("apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  profile: demo\n")
	f.Add("apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  components:\n    ingressGateways:\n    - name: a\n      k8s:\n        replicaCount: 2\n")
	f.Add("apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  values:\n    global:\n      tag: 1.30\n")
	f.Add("a: &x {b: 1}\nc: *x\n")
	f.Add("- 1\n- 2\n")
	f.Add("---\n---\n")
	f.Fuzz(func(t *testing.T, doc string) {
		res, err := spec.Resolve(spec.Options{Files: []string{"-"}, Stdin: strings.NewReader(doc)})
		if err != nil {
			return
		}
		stable(t, res.Tree)
	})
}

// stable fails unless tree's dump resolves, and that spec dumps the same.
func stable(t *testing.T, tree map[string]any) {
	t.Helper()
	out, err := spec.YAML(tree)
	if err != nil {
		t.Fatalf("dump: %v", err)
	}
	res, err := spec.Resolve(spec.Options{Files: []string{"-"}, Stdin: strings.NewReader(string(out))})
	if err != nil {
		t.Fatalf("the dump of a valid spec does not resolve: %v\n%s", err, out)
	}
	out2, _ := spec.YAML(res.Tree)
	if string(out) != string(out2) {
		t.Fatalf("dump is not stable:\n%s\n---\n%s", out, out2)
	}
}
