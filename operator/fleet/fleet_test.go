package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
)

// bedContexts are the contexts make cluster-up CLUSTERS=3 writes.
var bedContexts = []string{"cluster-1", "cluster-2", "cluster-3"}

// TestBadFleetFiles loads each file of testdata/bad and compares the error, which must
// name the file and a line, with its golden (.err).
func TestBadFleetFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 15 {
		t.Fatalf("only %d bad fleet files", len(files))
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			f, err := Load(file, nil, bedContexts)
			if err == nil {
				t.Fatalf("loads: %+v", f)
			}
			msg := err.Error()
			if !strings.Contains(msg, file+":") {
				t.Errorf("the error names no line of %s:\n%s", file, msg)
			}
			golden.Check(t, strings.TrimSuffix(file, ".yaml")+".err", []byte(msg+"\n"))
		})
	}
}

// TestGoodFleetFiles loads the examples and resolves every cluster's spec.
func TestGoodFleetFiles(t *testing.T) {
	for _, file := range []string{"../../docs/examples/fleet-3-clusters.yaml", "testdata/two-primaries.yaml", "testdata/external.yaml"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			f, err := Load(file, nil, bedContexts)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range f.Clusters {
				res, err := spec.Resolve(f.Spec(c))
				if err != nil {
					t.Fatalf("cluster %s: %v", c.Name, err)
				}
				if got, _ := spec.Lookup(res.Tree, "spec", "values", "global", "multiCluster", "clusterName"); got == nil {
					t.Errorf("cluster %s: no clusterName", c.Name)
				}
			}
		})
	}
}

// TestLinks derives the links of each model: every cluster running istiod reads every
// other cluster of the mesh, an external one its config cluster through istio-kubeconfig.
func TestLinks(t *testing.T) {
	ns := func(*Cluster) string { return "istio-system" }
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"../../docs/examples/fleet-3-clusters.yaml", []string{
			"cluster-1 <- istio-remote-secret-cluster-2 remote", "cluster-1 <- istio-remote-secret-cluster-3 remote",
			"cluster-2 <- istio-remote-secret-cluster-1 remote", "cluster-2 <- istio-remote-secret-cluster-3 remote"}},
		{"testdata/two-primaries.yaml", []string{"west <- istio-remote-secret-east remote", "east <- istio-remote-secret-west remote"}},
		{"testdata/external.yaml", []string{"cp <- istio-kubeconfig config", "cp <- istio-remote-secret-remote-2 remote"}},
	} {
		f, err := Load(tc.file, nil, bedContexts)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range f.Links(ns) {
			got = append(got, l.Into.Name+" <- "+l.Secret.Name+" "+string(l.Type))
			if l.Secret.Labels["fleet.istioctl-installer.github.io/mesh-id"] != f.MeshID || l.Secret.Labels["fleet.istioctl-installer.github.io/name"] != f.Name || l.Secret.Labels["istio/multiCluster"] != "true" {
				t.Errorf("%s: link %s labels %v", tc.file, l.Secret.Name, l.Secret.Labels)
			}
			if len(l.Secret.Data) != 0 {
				t.Errorf("%s: link %s carries data", tc.file, l.Secret.Name)
			}
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: links\n%s\nwant\n%s", tc.file, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}

// TestCACertsNeverRead: the dump names the key's file and never holds its content.
func TestCACertsNeverRead(t *testing.T) {
	f, err := Load("testdata/two-primaries.yaml", nil, bedContexts)
	if err != nil {
		t.Fatal(err)
	}
	resolved := map[string]*spec.Resolved{}
	for _, c := range f.Clusters {
		if resolved[c.Name], err = spec.Resolve(f.Spec(c)); err != nil {
			t.Fatal(err)
		}
	}
	d := f.Dump(resolved)
	key, err := os.ReadFile("testdata/certs/shared/ca-key.pem")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range d.Clusters {
		if c.CACerts == nil || c.CACerts.Files["ca-key.pem"] != "certs/shared/ca-key.pem" {
			t.Errorf("cluster %s: cacerts %+v", c.Name, c.CACerts)
		}
		if strings.Contains(strings.Join([]string{c.CACerts.Secret, c.CACerts.Files["ca-key.pem"]}, " "), strings.TrimSpace(string(key))) {
			t.Errorf("cluster %s: the dump holds the key", c.Name)
		}
	}
}

// TestWarnings: a deprecated field in an embedded spec is a warning with its line, not an
// error.
func TestWarnings(t *testing.T) {
	data := []byte(`apiVersion: fleet.istioctl-installer.github.io/v1alpha1
kind: Fleet
metadata:
  name: w
spec:
  meshID: m
  istioOperator:
    values:
      istiodRemote:
        injectionURL: https://example.com
  clusters:
  - {name: a, context: cluster-1, network: n, role: primary}
`)
	f, err := Decode("w.yaml", ".", data, bedContexts)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Warnings) != 1 || f.Warnings[0].Error() != "w.yaml:9: spec.istioOperator.values.istiodRemote: is deprecated; use the remote profile (profile: remote) and values.global.remotePilotAddress instead" {
		t.Errorf("warnings %v", f.Warnings)
	}
}
