package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeSpec(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(p, []byte("apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// spec.external stands for upstream values: each declaration, and what it becomes.
func TestExternalTranslation(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec string
		sets []string
		want map[string]any
	}{
		{"existing control plane", `spec:
  profile: empty
  external:
    controlPlane: {namespace: mesh-cp, revision: canary}
  components:
    ingressGateways: [{name: edge, enabled: true}]
`, nil, map[string]any{"values.global.istioNamespace": "mesh-cp", "revision": "canary"}},
		{"remote control plane", `spec:
  profile: remote
  external:
    remote: {address: istiod.example.com, injectionURL: "https://istiod.example.com:15017/inject/cluster/c2/net/n2"}
`, nil, map[string]any{"values.global.remotePilotAddress": "istiod.example.com",
			"values.istiodRemote.injectionURL": "https://istiod.example.com:15017/inject/cluster/c2/net/n2"}},
		{"istio-csr", `spec:
  external:
    ca: {type: external, address: "cert-manager-istio-csr.cert-manager.svc:443"}
`, nil, map[string]any{"values.global.caAddress": "cert-manager-istio-csr.cert-manager.svc:443", "values.pilot.env.ENABLE_CA_SERVER": "false"}},
		{"Kubernetes signer", `spec:
  external:
    ca: {type: kubernetes, signer: example.com/istio}
  values:
    global:
      certSigners: [other.io/x]
`, nil, map[string]any{"values.pilot.env.EXTERNAL_CA": "ISTIOD_RA_KUBERNETES_API", "values.pilot.env.K8S_SIGNER": "example.com/istio",
			"values.global.certSigners": []any{"other.io/x", "example.com/istio"}}},
		{"plugged-in CA", `spec:
  external:
    ca: {type: cacerts}
`, nil, map[string]any{"values.global.pilotCertProvider": "istiod"}},
		{"plugged-in CA in another Secret", `spec:
  external:
    ca: {type: cacerts, secretName: mesh-ca}
`, nil, map[string]any{"components.pilot.k8s.volumes": []any{map[string]any{"name": "cacerts", "secret": map[string]any{"secretName": "mesh-ca", "optional": true}}}}},
		{"Prometheus Service", `spec:
  external:
    prometheus: {service: "monitoring/prometheus:9090"}
`, nil, map[string]any{"meshConfig.defaultProviders.metrics": []any{"prometheus"}}},
		{"Prometheus with the user's own provider", `spec:
  external:
    prometheus: {url: "https://prom.example.com"}
  meshConfig:
    extensionProviders: [{name: prom2, prometheus: {}}]
    defaultProviders: {metrics: [prom2]}
`, nil, map[string]any{"meshConfig.defaultProviders.metrics": []any{"prom2"}}},
		{"set by --set", ``, []string{"external.ca.type=external", "external.ca.address=ca.example.com:443"},
			map[string]any{"values.global.caAddress": "ca.example.com:443"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Sets: tc.sets}
			if tc.spec != "" {
				opts.Files = []string{writeSpec(t, tc.spec)}
			}
			res := resolveWith(t, opts)
			for path, want := range tc.want {
				if got := at(t, res, path); !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %#v, want %#v", path, got, want)
				}
			}
		})
	}
}

// Without spec.external nothing changes: upstream files mean what they meant.
func TestExternalAbsentChangesNothing(t *testing.T) {
	res := resolveWith(t, Options{})
	for _, path := range []string{"values.global.caAddress", "values.pilot.env", "meshConfig.defaultProviders", "revision"} {
		p, _ := ParsePath(path)
		if v, err := get(res.Tree, append(Path{{Key: "spec", kind: segKey}}, p...)); err == nil {
			t.Errorf("%s = %v without spec.external", path, v)
		}
	}
	if got := at(t, res, "values.global.istioNamespace"); got != "istio-system" {
		t.Errorf("istioNamespace = %v", got)
	}
}

// Mistakes in spec.external are reported like any other: file, line, field, what to do.
func TestExternalValidation(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		sets       []string
		want       []string
	}{
		{"unknown field", `spec:
  external:
    prometheus:
      servce: monitoring/prometheus:9090
`, nil, []string{"spec.yaml:6: spec.external.prometheus.servce: unknown field; did you mean service?"}},
		{"unknown CA type", `spec:
  external:
    ca:
      type: vault
`, nil, []string{`spec.yaml:6: spec.external.ca.type: "vault" is not one of istiod, cacerts, external, kubernetes`}},
		{"external CA without address", `spec:
  external:
    ca:
      type: external
`, nil, []string{"spec.yaml:5: spec.external.ca.address: missing: type external needs the CA's host:port"}},
		{"address on the wrong type", `spec:
  external:
    ca:
      type: cacerts
      address: ca.example.com:443
`, nil, []string{"spec.yaml:7: spec.external.ca.address: is only used with type external (the type is cacerts)"}},
		{"bad CA address", `spec:
  external:
    ca: {type: external, address: "no-port.example.com"}
`, nil, []string{`spec.yaml:5: spec.external.ca.address: "no-port.example.com": want host:port`}},
		{"bad signer", `spec:
  external:
    ca: {type: kubernetes, signer: nodomain}
`, nil, []string{`spec.external.ca.signer: "nodomain" is not a signer name`}},
		{"bad Prometheus Service", `spec:
  external:
    prometheus:
      service: prometheus:9090
`, nil, []string{`spec.yaml:6: spec.external.prometheus.service: "prometheus:9090": want namespace/name:port`}},
		{"Prometheus service and url", `spec:
  external:
    prometheus: {service: "monitoring/prometheus:9090", url: "http://prom:9090"}
`, nil, []string{"spec.external.prometheus: set service or url, not both"}},
		{"control plane and istiod both", `spec:
  external:
    controlPlane: {}
  components:
    pilot:
      enabled: true
`, nil, []string{"spec.yaml:8: spec.components.pilot.enabled: is true, but spec.external.controlPlane says the control plane (Base and istiod) already runs"}},
		{"control plane from the default profile", `spec:
  external:
    controlPlane: {namespace: istio-system}
`, nil, []string{`profile "default"`, "spec.components.base.enabled: is true, but spec.external.controlPlane", "spec.components.pilot.enabled: is true"}},
		{"remote without the remote profile", `spec:
  external:
    remote: {address: 10.1.2.3}
`, nil, []string{"spec.external.remote: needs a remote configuration: use profile remote"}},
		{"remote with a port", `spec:
  profile: remote
  external:
    remote: {address: "istiod.example.com:15012"}
`, nil, []string{"spec.external.remote.address: \"istiod.example.com:15012\": give the IP address or host name only"}},
		{"both control planes", `spec:
  profile: remote
  components: {base: {enabled: false}, pilot: {enabled: false}}
  external:
    controlPlane: {}
    remote: {address: 10.1.2.3}
`, nil, []string{"spec.external.remote: cannot be used with spec.external.controlPlane"}},
		{"conflicting value in the file", `spec:
  external:
    ca: {type: external, address: "cert-manager-istio-csr.cert-manager.svc:443"}
  values:
    global:
      caAddress: other.example.com:443
`, nil, []string{`spec.yaml:8: spec.values.global.caAddress: is "other.example.com:443", but spec.external.ca.address sets "cert-manager-istio-csr.cert-manager.svc:443": remove one of the two`}},
		{"conflicting --set", `spec:
  profile: empty
  external:
    controlPlane: {revision: canary}
`, []string{"revision=stable"}, []string{`--set revision=stable: spec.revision: is "stable", but spec.external.controlPlane.revision sets "canary"`}},
		{"a value the declaration leaves unset", `spec:
  external:
    ca: {type: cacerts}
  values:
    pilot:
      env:
        EXTERNAL_CA: ISTIOD_RA_KUBERNETES_API
`, nil, []string{`spec.yaml:9: spec.values.pilot.env.EXTERNAL_CA: is "ISTIOD_RA_KUBERNETES_API", but spec.external.ca.type leaves it unset`}},
		{"metrics without Prometheus", `spec:
  external:
    prometheus: {service: "monitoring/prometheus:9090"}
  meshConfig:
    defaultProviders:
      metrics: [stackdriver]
`, nil, []string{`spec.yaml:8: spec.meshConfig.defaultProviders.metrics: is ["stackdriver"], which has no Prometheus provider`}},
		{"another Secret for an istiod not installed here", `spec:
  profile: empty
  external:
    controlPlane: {}
    ca: {type: cacerts, secretName: mesh-ca}
`, nil, []string{`spec.external.ca.secretName: "mesh-ca": only an istiod this spec installs`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeSpec(t, tc.spec)
			_, err := Resolve(Options{Files: []string{file}, Sets: tc.sets})
			if err == nil {
				t.Fatal("want an error")
			}
			msg := strings.ReplaceAll(err.Error(), file, "spec.yaml")
			for _, want := range tc.want {
				if !strings.Contains(msg, want) {
					t.Errorf("error lacks %q:\n%s", want, msg)
				}
			}
		})
	}
}

// A profile's value gives way to the declaration; the same value given twice is no conflict.
func TestExternalProfileValuesGiveWay(t *testing.T) {
	p := writeSpec(t, `spec:
  profile: empty
  external:
    controlPlane: {namespace: mesh-cp}
  values:
    global:
      istioNamespace: mesh-cp
`)
	res := resolveWith(t, Options{Files: []string{p}})
	if got := at(t, res, "values.global.istioNamespace"); got != "mesh-cp" {
		t.Errorf("istioNamespace = %v", got)
	}
	if res.IOP.Spec.External == nil || res.IOP.Spec.External.ControlPlane == nil || res.IOP.Spec.External.ControlPlane.Namespace != "mesh-cp" {
		t.Errorf("typed spec.external = %+v", res.IOP.Spec.External)
	}
}
