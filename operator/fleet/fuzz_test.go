package fleet

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// FuzzDecodeFleet decodes arbitrary bytes as a fleet file: every problem names the file; a
// fleet that decodes holds what validation promises (unique cluster names and contexts of
// the kubeconfig, each primary named another cluster of the fleet running istiod), and every
// derivation from it (each cluster's spec resolved, the links, the east-west installs, the
// dump) runs without a panic, each link between two clusters of the fleet.
func FuzzDecodeFleet(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yaml")
	bad, _ := filepath.Glob("testdata/bad/*.yaml")
	examples, _ := filepath.Glob("../../docs/examples/fleet-*.yaml")
	if len(seeds) == 0 || len(bad) == 0 || len(examples) == 0 {
		f.Fatal("no fleet files under testdata/ and docs/examples/")
	}
	for _, file := range append(append(seeds, bad...), examples...) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	const source = "fuzz/fleet.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		fl, err := Decode(source, "testdata", data, bedContexts)
		if err != nil {
			var ps v1alpha1.Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("error is no list of problems: %v", err)
			}
			for _, p := range ps {
				if p.Source != source {
					t.Fatalf("problem without the file: %#v", p)
				}
			}
			return
		}
		names, contexts := map[string]bool{}, map[string]bool{}
		for _, c := range fl.Clusters {
			if names[c.Name] || contexts[c.Context] {
				t.Fatalf("cluster %q (context %q) twice", c.Name, c.Context)
			}
			names[c.Name], contexts[c.Context] = true, true
			if !contains(bedContexts, c.Context) {
				t.Fatalf("cluster %q: context %q is not the kubeconfig's", c.Name, c.Context)
			}
			if c.Primary != "" {
				p := fl.Cluster(c.Primary)
				if p == nil || p == c || !p.Role.ControlPlane() {
					t.Fatalf("cluster %q: primary %q is no control plane of the fleet", c.Name, c.Primary)
				}
			}
		}
		resolved := map[string]*spec.Resolved{}
		for _, c := range fl.Clusters {
			if res, err := spec.Resolve(fl.Spec(c)); err == nil {
				resolved[c.Name] = res
			}
			fl.EastWest(c, "")
			fl.Exposes(c)
		}
		for _, l := range fl.Links(func(*Cluster) string { return "istio-system" }) {
			if fl.Cluster(l.Into.Name) != l.Into || fl.Cluster(l.From.Name) != l.From || l.Into == l.From {
				t.Fatalf("link %s -> %s is not between two clusters of the fleet", l.From.Name, l.Into.Name)
			}
		}
		if len(resolved) == len(fl.Clusters) {
			fl.Dump(resolved)
		}
	})
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
