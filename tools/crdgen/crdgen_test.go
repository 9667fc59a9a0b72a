package main

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestGeneratedFileIsCurrent fails when the committed CRDs differ from what the generator
// writes now (run make generate).
func TestGeneratedFileIsCurrent(t *testing.T) {
	got, err := render()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../manifests/charts/base/crds/crd-all.gen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Error("manifests/charts/base/crds/crd-all.gen.yaml is stale: run make generate")
	}
}

func TestChartVersion(t *testing.T) {
	b, err := os.ReadFile("../../manifests/charts/base/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\nversion: "+chartVersion+"\n") {
		t.Errorf("the base chart's version is not %s: update chartVersion", chartVersion)
	}
}

type wantCRD struct {
	name, kind, scope string
	short, cats       []string
	// versions as "name:served:storage"
	versions []string
	columns  []string
}

// Expected metadata, written out independently of the generator's table.
var wantCRDs = []wantCRD{
	{"authorizationpolicies.security.istio.io", "AuthorizationPolicy", "Namespaced", []string{"ap"}, []string{"istio-io", "security-istio-io"}, []string{"v1:true:true", "v1beta1:true:false"}, []string{"Action=.spec.action", "Age=.metadata.creationTimestamp"}},
	{"destinationrules.networking.istio.io", "DestinationRule", "Namespaced", []string{"dr"}, []string{"istio-io", "networking-istio-io"}, []string{"v1:true:true", "v1alpha3:true:false", "v1beta1:true:false"}, []string{"Host=.spec.host", "Age=.metadata.creationTimestamp"}},
	{"envoyfilters.networking.istio.io", "EnvoyFilter", "Namespaced", nil, []string{"istio-io", "networking-istio-io"}, []string{"v1alpha3:true:true"}, nil},
	{"gateways.networking.istio.io", "Gateway", "Namespaced", []string{"gw"}, []string{"istio-io", "networking-istio-io"}, []string{"v1:true:true", "v1alpha3:true:false", "v1beta1:true:false"}, nil},
	{"peerauthentications.security.istio.io", "PeerAuthentication", "Namespaced", []string{"pa"}, []string{"istio-io", "security-istio-io"}, []string{"v1:true:true", "v1beta1:true:false"}, []string{"Mode=.spec.mtls.mode", "Age=.metadata.creationTimestamp"}},
	{"proxyconfigs.networking.istio.io", "ProxyConfig", "Namespaced", nil, []string{"istio-io", "networking-istio-io"}, []string{"v1beta1:true:true"}, nil},
	{"requestauthentications.security.istio.io", "RequestAuthentication", "Namespaced", []string{"ra"}, []string{"istio-io", "security-istio-io"}, []string{"v1:true:true", "v1beta1:true:false"}, nil},
	{"serviceentries.networking.istio.io", "ServiceEntry", "Namespaced", []string{"se"}, []string{"istio-io", "networking-istio-io"}, []string{"v1:true:true", "v1alpha3:true:false", "v1beta1:true:false"}, []string{"Hosts=.spec.hosts", "Location=.spec.location", "Resolution=.spec.resolution", "Age=.metadata.creationTimestamp"}},
	{"sidecars.networking.istio.io", "Sidecar", "Namespaced", nil, []string{"istio-io", "networking-istio-io"}, []string{"v1:true:true", "v1alpha3:true:false", "v1beta1:true:false"}, nil},
	{"telemetries.telemetry.istio.io", "Telemetry", "Namespaced", []string{"telemetry"}, []string{"istio-io", "telemetry-istio-io"}, []string{"v1:true:false", "v1alpha1:true:true"}, []string{"Age=.metadata.creationTimestamp"}},
	{"trafficextensions.extensions.istio.io", "TrafficExtension", "Namespaced", nil, []string{"istio-io", "extensions-istio-io"}, []string{"v1alpha1:true:true"}, []string{"Age=.metadata.creationTimestamp"}},
	{"virtualservices.networking.istio.io", "VirtualService", "Namespaced", []string{"vs"}, []string{"istio-io", "networking-istio-io"}, []string{"v1:true:true", "v1alpha3:true:false", "v1beta1:true:false"}, []string{"Gateways=.spec.gateways", "Hosts=.spec.hosts", "Age=.metadata.creationTimestamp"}},
	{"wasmplugins.extensions.istio.io", "WasmPlugin", "Namespaced", nil, []string{"istio-io", "extensions-istio-io"}, []string{"v1alpha1:true:true"}, []string{"Age=.metadata.creationTimestamp"}},
	{"workloadentries.networking.istio.io", "WorkloadEntry", "Namespaced", []string{"we"}, []string{"istio-io", "networking-istio-io"}, []string{"v1:true:true", "v1alpha3:true:false", "v1beta1:true:false"}, []string{"Age=.metadata.creationTimestamp", "Address=.spec.address"}},
	{"workloadgroups.networking.istio.io", "WorkloadGroup", "Namespaced", []string{"wg"}, []string{"istio-io", "networking-istio-io"}, []string{"v1:true:true", "v1alpha3:true:false", "v1beta1:true:false"}, []string{"Age=.metadata.creationTimestamp"}},
}

func TestCRDMetadata(t *testing.T) {
	objs, err := build()
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != len(wantCRDs) {
		t.Fatalf("%d CRDs, want %d", len(objs), len(wantCRDs))
	}
	for i, o := range objs {
		w := wantCRDs[i]
		t.Run(w.name, func(t *testing.T) {
			var versions, columns []string
			for _, v := range o.Spec.Versions {
				versions = append(versions, v.Name+":"+boolStr(v.Served)+":"+boolStr(v.Storage))
				if v.Subresources == nil || v.Subresources.Status == nil {
					t.Errorf("version %s has no status subresource", v.Name)
				}
				var cols []string
				for _, c := range v.AdditionalPrinterColumns {
					cols = append(cols, c.Name+"="+c.JSONPath)
				}
				if columns == nil {
					columns = cols
				} else if !reflect.DeepEqual(cols, columns) {
					t.Errorf("version %s columns %v differ from %v", v.Name, cols, columns)
				}
			}
			for _, c := range []struct {
				what      string
				got, want any
			}{
				{"name", o.Name, w.name},
				{"kind", o.Spec.Names.Kind, w.kind},
				{"listKind", o.Spec.Names.ListKind, w.kind + "List"},
				{"scope", string(o.Spec.Scope), w.scope},
				{"shortNames", o.Spec.Names.ShortNames, w.short},
				{"categories", o.Spec.Names.Categories, w.cats},
				{"versions", versions, w.versions},
				{"columns", columns, w.columns},
			} {
				if !reflect.DeepEqual(c.got, c.want) {
					t.Errorf("%s = %#v, want %#v", c.what, c.got, c.want)
				}
			}
		})
	}
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
