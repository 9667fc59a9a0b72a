package spec

import (
	"github.com/istioctl-installer/istioctl/pkg/version"
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
		{"a string field keeps a number as text (upstream rejects it)", []string{"values.global.multiCluster.clusterName=123"}, "values.global.multiCluster.clusterName", "123"},
		{"a string field keeps a boolean as text (upstream rejects it)", []string{"values.global.meshID=true"}, "values.global.meshID", "true"},
		{"an escaped comma in a string field, as upstream", []string{`values.global.proxy.excludeIPRanges=10.0.0.0/8\,192.168.0.0/16`}, "values.global.proxy.excludeIPRanges", "10.0.0.0/8,192.168.0.0/16"},
		{"a mesh config enum by name", []string{"meshConfig.accessLogEncoding=JSON"}, "meshConfig.accessLogEncoding", "JSON"},
		{"a mesh config enum by number, as protobuf's JSON", []string{"meshConfig.accessLogEncoding=1"}, "meshConfig.accessLogEncoding", int64(1)},
		{"a nested mesh config enum by number", []string{"meshConfig.outboundTrafficPolicy.mode=0"}, "meshConfig.outboundTrafficPolicy.mode", int64(0)},
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
		{"meshConfig.accessLogEncoding=7", `"7" is not one of TEXT, JSON`},
		{"meshConfig.accessLogEncoding=-1", `"-1" is not one of TEXT, JSON`},
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
		"profile":                              "demo",          // selected by file a
		"components.egressGateways[0].enabled": true,            // from the demo profile, over default
		"values.global.istioNamespace":         "istio-system",  // from default, kept
		"hub":                                  "b.io/istio",    // b over a over default
		"values.pilot.traceSampling":           int64(10),       // a, untouched by b: maps merge
		"values.pilot.autoscaleMin":            int64(4),        // --set over b over a
		"tag":                                  version.Version, // default profile
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

// --force turns every field's problem into a warning, as upstream: a bad format, an unknown
// field (kept, so it reaches the charts' values as upstream's does) or a wrong type in a file;
// a file that is not YAML stays an error.
func TestForceTurnsErrorsIntoWarnings(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const header = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\n"
	for _, tc := range []struct {
		name string
		opts Options
		keep string // a path the forced spec still holds
	}{
		{"a bad revision by --set", Options{Sets: []string{"revision=Not_Valid"}}, "revision"},
		{"an unknown field by --set", Options{Sets: []string{"values.pilot.autoscaleMinimum=2"}}, "values.pilot.autoscaleMinimum"},
		{"an unknown field in a file", Options{Files: []string{file("unknown.yaml", header+"spec:\n  values:\n    pilot:\n      autoscaleMinimum: 2\n")}}, "values.pilot.autoscaleMinimum"},
		{"a wrong type in a file", Options{Files: []string{file("type.yaml", header+"spec:\n  values:\n    pilot:\n      autoscaleMin: two\n")}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Resolve(tc.opts); err == nil {
				t.Fatal("want an error without Force")
			}
			tc.opts.Force = true
			res, err := Resolve(tc.opts)
			if err != nil {
				t.Fatalf("with Force: %v", err)
			}
			if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0].Msg, "ignored because of --force") {
				t.Errorf("warnings = %v", res.Warnings)
			}
			if tc.keep != "" && at(t, res, tc.keep) == nil {
				t.Errorf("%s is gone from the forced spec", tc.keep)
			}
		})
	}
	_, err := Resolve(Options{Files: []string{file("bad.yaml", "spec: [\n")}, Force: true})
	if err == nil || !strings.Contains(err.Error(), "invalid YAML") {
		t.Errorf("a file that is not YAML, with Force: %v, want invalid YAML", err)
	}
}

// --set profile= takes the path of a profile file as well as a name (upstream master names
// only).
func TestProfileFilePath(t *testing.T) {
	p := filepath.Join(t.TempDir(), "my-profile.yaml")
	body := "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  components:\n    ingressGateways: []\n  values:\n    global:\n      logging:\n        level: default:debug\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	res := resolveWith(t, Options{Sets: []string{"profile=" + p}})
	if got := at(t, res, "values.global.logging.level"); got != "default:debug" {
		t.Errorf("values.global.logging.level = %v, want the profile file's default:debug", got)
	}
	if got := at(t, res, "components.pilot.enabled"); got != true {
		t.Errorf("components.pilot.enabled = %v, want the default profile's true under the file", got)
	}
}
