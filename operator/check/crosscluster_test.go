package check

import (
	"context"
	"strings"
	"testing"
)

func input(name, role, primary, clusterName, meshID string) ClusterInput {
	return ClusterInput{Name: name, Role: role, Primary: primary, ControlPlane: role == "primary" || role == "external",
		Values: map[string]any{"global": map[string]any{"meshID": meshID, "multiCluster": map[string]any{"clusterName": clusterName}}}}
}

func TestCrossCluster(t *testing.T) {
	for _, tc := range []struct {
		name     string
		clusters []ClusterInput
		// failed are "check object" of the failures.
		failed []string
	}{
		{"a good mesh", []ClusterInput{input("a", "primary", "", "a", "m"), input("b", "remote", "a", "b", "m")}, nil},
		{"two clusters with one name", []ClusterInput{input("a", "primary", "", "x", "m"), input("b", "primary", "", "x", "m")},
			[]string{"cross-cluster-names Cluster/a", "cross-cluster-names Cluster/b"}},
		{"the default name", []ClusterInput{input("a", "primary", "", "Kubernetes", "m")}, []string{"cross-cluster-names Cluster/a"}},
		{"two mesh IDs", []ClusterInput{input("a", "primary", "", "a", "m"), input("b", "primary", "", "b", "m"), input("c", "primary", "", "c", "n")},
			[]string{"cross-mesh-id Cluster/c"}},
		{"no mesh ID", []ClusterInput{input("a", "primary", "", "a", "")}, []string{"cross-mesh-id Cluster/a"}},
		{"a primary not in the mesh", []ClusterInput{input("a", "primary", "", "a", "m"), input("b", "remote", "z", "b", "m")}, []string{"cross-primaries Cluster/b"}},
		{"a primary that is a remote", []ClusterInput{input("a", "primary", "", "a", "m"), input("b", "remote", "a", "b", "m"), input("c", "remote", "b", "c", "m")},
			[]string{"cross-primaries Cluster/c"}},
		{"an external's name is its config cluster's", []ClusterInput{input("cp", "external", "", "cfg", "m"), input("cfg", "config", "cp", "cfg", "m")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := RunCross(context.Background(), "fleet precheck", CrossCluster(), tc.clusters)
			var failed []string
			for _, r := range rep.Results {
				if r.Section != SectionCrossCluster {
					t.Errorf("result in section %q", r.Section)
				}
				if !r.Passed {
					failed = append(failed, r.Check+" "+r.Object)
					if r.Hint == "" {
						t.Errorf("%s has no hint", r.Check)
					}
				}
			}
			if strings.Join(failed, ",") != strings.Join(tc.failed, ",") {
				t.Errorf("failed %v, want %v", failed, tc.failed)
			}
		})
	}
}
