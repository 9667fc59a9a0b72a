package check

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// facts is a fleet's cluster as read: its roles and declared values, one network, a root.
func facts(name, role, primary, clusterName, meshID string) ClusterFacts {
	cp := role == "primary" || role == "external"
	return ClusterFacts{Name: name, Role: role, Primary: primary, ControlPlane: cp, Known: true, Root: "r1", RootSubject: "CN=Root",
		MeshValues: MeshValues{ClusterName: clusterName, MeshID: meshID, Network: "n1", Remote: !cp}, Gateways: map[string]string{}, LinkServers: map[string]string{}}
}

func TestCrossCluster(t *testing.T) {
	unread := facts("b", "remote", "a", "b", "m")
	unread.ReadErr = errors.New("connection refused")
	for _, tc := range []struct {
		name     string
		clusters []ClusterFacts
		// failed are "check object" of the failures.
		failed []string
	}{
		{"a good mesh", []ClusterFacts{facts("a", "primary", "", "a", "m"), facts("b", "remote", "a", "b", "m")}, nil},
		{"two clusters with one name", []ClusterFacts{facts("a", "primary", "", "x", "m"), facts("b", "primary", "", "x", "m")},
			[]string{"mesh-cluster-name (Clusters a, b)"}},
		{"the default name", []ClusterFacts{facts("a", "primary", "", "Kubernetes", "m")}, []string{"mesh-cluster-name (Cluster a)"}},
		{"two mesh IDs", []ClusterFacts{facts("a", "primary", "", "a", "m"), facts("b", "primary", "", "b", "m"), facts("c", "primary", "", "c", "n")},
			[]string{"mesh-id (Mesh)"}},
		{"no mesh ID", []ClusterFacts{facts("a", "primary", "", "a", "")}, []string{"mesh-id (Mesh)"}},
		{"a primary not in the mesh", []ClusterFacts{facts("a", "primary", "", "a", "m"), facts("b", "remote", "z", "b", "m")}, []string{"mesh-primaries (Cluster b)"}},
		{"a primary that is a remote", []ClusterFacts{facts("a", "primary", "", "a", "m"), facts("b", "remote", "a", "b", "m"), facts("c", "remote", "b", "c", "m")},
			[]string{"mesh-primaries (Cluster c)"}},
		{"an external's name is its config cluster's", []ClusterFacts{facts("cp", "external", "", "cfg", "m"), facts("cfg", "config", "cp", "cfg", "m")}, nil},
		{"one cluster through two contexts", []ClusterFacts{withUID(facts("a", "primary", "", "a", "m"), "u1"), withUID(facts("b", "primary", "", "b", "m"), "u1"),
			withUID(facts("c", "remote", "a", "c", "m"), "u2")}, []string{"mesh-distinct (Clusters a, b)"}},
		{"a cluster that cannot be read is named, its values still compared", []ClusterFacts{facts("a", "primary", "", "a", "m"), unread},
			[]string{"mesh-read (Cluster b)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := runFacts(context.Background(), "fleet precheck", CrossCluster(), tc.clusters)
			var failed []string
			for _, r := range rep.Results {
				if r.Section != SectionCrossCluster {
					t.Errorf("result in section %q", r.Section)
				}
				if !r.Passed {
					failed = append(failed, r.Check+" "+r.Object)
					if !strings.Contains(r.Hint, "docs/multicluster.md#"+r.Check) {
						t.Errorf("%s's hint %q names no anchor of its own", r.Check, r.Hint)
					}
				}
			}
			if strings.Join(failed, ",") != strings.Join(tc.failed, ",") {
				t.Errorf("failed %v, want %v", failed, tc.failed)
			}
		})
	}
}

// TestCrossClusterRegistry: the registry's ids are unique and each has a title and a hint.
func TestCrossClusterRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range CrossCluster() {
		if seen[c.ID] || c.Title == "" || c.Hint == "" || c.Section != SectionCrossCluster || c.Cross == nil {
			t.Errorf("check %q: duplicate, or without title, hint, section or function", c.ID)
		}
		seen[c.ID] = true
	}
	for _, id := range []string{"mesh-trust", "mesh-network"} {
		if !seen[id] {
			t.Errorf("the registry has no %s", id)
		}
	}
}

func withUID(f ClusterFacts, uid string) ClusterFacts {
	f.UID = uid
	return f
}
