package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// resolveWith resolves the default profile plus sets, failing the test on error.
func resolveWith(t *testing.T, opts Options) *Resolved {
	t.Helper()
	res, err := Resolve(opts)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return res
}

func at(t *testing.T, res *Resolved, path string) any {
	t.Helper()
	p, err := ParsePath(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := get(res.Tree, append(Path{{Key: "spec", kind: segKey}}, p...))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func TestSetRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
		path string
		want any
	}{
		{"plain key", []string{"values.pilot.traceSampling=0.5"}, "values.pilot.traceSampling", 0.5},
		{"int typed by schema", []string{"values.pilot.autoscaleMin=2"}, "values.pilot.autoscaleMin", int64(2)},
		{"bool typed by schema", []string{"values.pilot.autoscaleEnabled=false"}, "values.pilot.autoscaleEnabled", false},
		{"string field keeps digits as text", []string{"values.global.logging.level=1"}, "values.global.logging.level", "1"},
		{"tag stays a string", []string{"tag=1.30"}, "tag", "1.30"},
		{"values.global.tag stays a string", []string{"values.global.tag=1.20"}, "values.global.tag", "1.20"},
		{"compatibilityVersion stays a string", []string{"compatibilityVersion=1.28"}, "compatibilityVersion", "1.28"},
		{"free-form int", []string{"unvalidatedValues.x=7"}, "unvalidatedValues.x", int64(7)},
		{"free-form float", []string{"unvalidatedValues.x=0.25"}, "unvalidatedValues.x", 0.25},
		{"free-form bool", []string{"unvalidatedValues.x=true"}, "unvalidatedValues.x", true},
		{"free-form string", []string{"unvalidatedValues.x=hello"}, "unvalidatedValues.x", "hello"},
		{"escaped comma", []string{`unvalidatedValues.x=a\,b`}, "unvalidatedValues.x", "a,b"},
		{"value holds =", []string{"unvalidatedValues.x=a=b"}, "unvalidatedValues.x", "a=b"},
		{"escaped dot in key", []string{`meshConfig.defaultConfig.proxyMetadata.ISTIO_META\.X=1`}, `meshConfig.defaultConfig.proxyMetadata.ISTIO_META\.X`, "1"},
		{"proxyMetadata always string", []string{"meshConfig.defaultConfig.proxyMetadata.ISTIO_META_DNS_CAPTURE=true"}, "meshConfig.defaultConfig.proxyMetadata.ISTIO_META_DNS_CAPTURE", "true"},
		{"selector finds a profile item", []string{"components.ingressGateways[name:istio-ingressgateway].k8s.replicaCount=3"}, "components.ingressGateways[0].k8s.replicaCount", int64(3)},
		{"selector keeps the other fields", []string{"components.ingressGateways[name:istio-ingressgateway].label.team=a"}, "components.ingressGateways[0].enabled", true},
		{"index edits a profile item", []string{"components.egressGateways[0].enabled=true"}, "components.egressGateways[name:istio-egressgateway].enabled", true},
		{"index equal to length appends once", []string{"components.ingressGateways[1].name=gw2", "components.ingressGateways[1].enabled=true"}, "components.ingressGateways[1]", map[string]any{"name": "gw2", "enabled": true}},
		{"dotted index form", []string{"components.ingressGateways.[0].namespace=edge"}, "components.ingressGateways[0].namespace", "edge"},
		{"later flag wins", []string{"hub=a.io/x", "hub=b.io/y"}, "hub", "b.io/y"},
		{"creates missing maps", []string{"values.pilot.env.FOO=bar"}, "values.pilot.env.FOO", "bar"},
		{"k8s quantity", []string{"components.pilot.k8s.resources.requests.cpu=500m"}, "components.pilot.k8s.resources.requests.cpu", "500m"},
		{"enum", []string{"components.pilot.k8s.imagePullPolicy=Always"}, "components.pilot.k8s.imagePullPolicy", "Always"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := resolveWith(t, Options{Sets: tc.sets})
			if got := at(t, res, tc.path); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s = %#v (%T), want %#v (%T)", tc.path, got, got, tc.want, tc.want)
			}
		})
	}
}

func TestSetErrors(t *testing.T) {
	for _, tc := range []struct {
		set, want string
	}{
		{"novalue", `want path=value`},
		{"components.pilot.k8s.replicaCont=2", "spec.components.pilot.k8s.replicaCont: unknown field; did you mean replicaCount?"},
		{"values.pilot.autoscaleEnabled=yes", `want true or false, got "yes"`},
		{"values.pilot.autoscaleMin=two", `want an integer, got "two"`},
		{"components.ingressGateways[5].enabled=true", "index out of range: the list has 1 item(s)"},
		{"components.ingressGateways[name:nope].enabled=true", "no item with name=nope (the list has: istio-ingressgateway)"},
		{"components.pilot.enabled.x=1", "spec.components.pilot.enabled is a boolean, so it has no field"},
		{"components.pilot=1", "--set takes a single value"},
		{"values.global.resourceScope=everything", `"everything" is not one of`},
		{"hub[0]=x", "not a list"},
		{"a..b=1", "empty key"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			_, err := Resolve(Options{Sets: []string{tc.set}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("--set %s: error = %v, want %q", tc.set, err, tc.want)
			}
			if !strings.Contains(err.Error(), "--set "+tc.set) {
				t.Errorf("error %q does not name the flag", err)
			}
		})
	}
}

// Precedence, lowest to highest: default profile < selected profile < -f files left to
// right < --set in order.
func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.yaml", `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  profile: demo
  hub: a.io/istio
  values:
    pilot:
      autoscaleMin: 2
      traceSampling: 10
`)
	b := write("b.yaml", `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  hub: b.io/istio
  values:
    pilot:
      autoscaleMin: 3
`)
	res := resolveWith(t, Options{Files: []string{a, b}, Sets: []string{"values.pilot.autoscaleMin=4"}})
	for path, want := range map[string]any{
		"profile":                              "demo",         // selected by file a
		"components.egressGateways[0].enabled": true,           // from the demo profile, over default
		"values.global.istioNamespace":         "istio-system", // from default, kept
		"hub":                                  "b.io/istio",   // b over a over default
		"values.pilot.traceSampling":           int64(10),      // a, untouched by b: maps merge
		"values.pilot.autoscaleMin":            int64(4),       // --set over b over a
		"tag":                                  "1.30.0",       // default profile
	} {
		if got := at(t, res, path); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", path, got, want)
		}
	}

	// --set profile beats the file's profile; a user list replaces the profile's list.
	c := write("c.yaml", `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  components:
    ingressGateways:
    - name: edge
`)
	res = resolveWith(t, Options{Files: []string{a, c}, Sets: []string{"profile=minimal"}})
	if got := at(t, res, "profile"); got != "minimal" {
		t.Errorf("profile = %v, want minimal", got)
	}
	gws := at(t, res, "components.ingressGateways").([]any)
	if len(gws) != 1 || gws[0].(map[string]any)["name"] != "edge" {
		t.Errorf("ingressGateways = %v, want only edge", gws)
	}

	// stdin as the last -f.
	res = resolveWith(t, Options{Files: []string{a, "-"}, Stdin: strings.NewReader("apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  hub: stdin.io/istio\n")})
	if got := at(t, res, "hub"); got != "stdin.io/istio" {
		t.Errorf("hub = %v, want stdin.io/istio", got)
	}

	// --revision and --manifests are --set aliases; --revision default means none.
	res = resolveWith(t, Options{Revision: "canary"})
	if got := at(t, res, "revision"); got != "canary" {
		t.Errorf("revision = %v, want canary", got)
	}
	res = resolveWith(t, Options{Revision: "default"})
	if _, err := get(res.Tree, Path{{Key: "spec", kind: segKey}, {Key: "revision", kind: segKey}}); err == nil {
		t.Error("--revision default set spec.revision")
	}
}

func TestForceTurnsErrorsIntoWarnings(t *testing.T) {
	_, err := Resolve(Options{Sets: []string{"revision=Not_Valid"}})
	if err == nil {
		t.Fatal("want an error for a bad revision")
	}
	res, err := Resolve(Options{Sets: []string{"revision=Not_Valid"}, Force: true})
	if err != nil {
		t.Fatalf("with Force: %v", err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Msg, "ignored because of --force") {
		t.Errorf("warnings = %v", res.Warnings)
	}
}
