package check

import (
	"strings"
	"testing"
)

func TestMeshFindings(t *testing.T) {
	member := func(ctx, name, mesh, network string, gws ...string) ClusterFacts {
		m := ClusterFacts{Name: ctx, MeshValues: MeshValues{ClusterName: name, MeshID: mesh, Network: network}, Known: true,
			NamespaceNetwork: network, Root: "r1", RootSubject: "CN=Root", Gateways: map[string]string{}, LinkServers: map[string]string{}}
		for i, g := range gws {
			m.Gateways["istio-system/gw"+string(rune('a'+i))] = g
		}
		return m
	}
	good := func() []ClusterFacts {
		return []ClusterFacts{member("c1", "cluster-1", "mesh1", "net1", "net1"), member("c2", "cluster-2", "mesh1", "net2", "net2")}
	}
	for _, tc := range []struct {
		name  string
		edit  func([]ClusterFacts) []ClusterFacts
		fails []string // each must be a failed result's message (part of it)
	}{
		{"agreeing clusters", func(ms []ClusterFacts) []ClusterFacts { return ms }, nil},
		{"two clusters with one name", func(ms []ClusterFacts) []ClusterFacts { ms[1].ClusterName = "cluster-1"; return ms },
			[]string{`clusters c1 and c2 all have cluster name "cluster-1"`}},
		{"a cluster named Kubernetes", func(ms []ClusterFacts) []ClusterFacts { ms[0].ClusterName = "Kubernetes"; return ms },
			[]string{"cluster name is Kubernetes, the charts' default"}},
		{"no name is the default", func(ms []ClusterFacts) []ClusterFacts { ms[0].ClusterName = ""; return ms },
			[]string{"cluster name is Kubernetes"}},
		{"not DNS-1123", func(ms []ClusterFacts) []ClusterFacts { ms[0].ClusterName = "Cluster_1"; return ms },
			[]string{`cluster name "Cluster_1" is not a DNS-1123 label`}},
		{"two mesh IDs", func(ms []ClusterFacts) []ClusterFacts { ms[1].MeshID = "mesh2"; return ms },
			[]string{`the clusters have 2 mesh IDs: "mesh1" in c1; "mesh2" in c2`}},
		{"an unset mesh ID differs too", func(ms []ClusterFacts) []ClusterFacts { ms[1].MeshID = ""; return ms },
			[]string{"unset (the trust domain) in c2"}},
		{"differing roots", func(ms []ClusterFacts) []ClusterFacts { ms[1].Root, ms[1].RootSubject = "r2", "CN=Other"; return ms },
			[]string{"the cacerts roots differ: c1 (root CN=Root, sha256 r1...) vs c2 (root CN=Other, sha256 r2...)"}},
		{"no cacerts", func(ms []ClusterFacts) []ClusterFacts { ms[1].Root = ""; return ms },
			[]string{"has no cacerts Secret"}},
		{"no cacerts anywhere warns", func(ms []ClusterFacts) []ClusterFacts { ms[0].Root, ms[1].Root = "", ""; return ms }, nil},
		{"a remote signs nothing", func(ms []ClusterFacts) []ClusterFacts { ms[1].Root, ms[1].Remote = "", true; return ms }, nil},
		{"a shared CA", func(ms []ClusterFacts) []ClusterFacts { ms[0].SharedCA = true; ms[1].Root = "r2"; return ms }, nil},
		{"a network with no gateway", func(ms []ClusterFacts) []ClusterFacts { ms[1].Gateways = map[string]string{}; return ms },
			[]string{`network "net2" has no east-west gateway`}},
		{"a gateway the spec installs counts", func(ms []ClusterFacts) []ClusterFacts {
			ms[1].Gateways = map[string]string{}
			ms[1].GatewayNetworks = []string{"net2"}
			return ms
		}, nil},
		{"one network needs no gateway", func(ms []ClusterFacts) []ClusterFacts {
			ms[1].Network, ms[1].NamespaceNetwork, ms[1].Gateways = "net1", "net1", map[string]string{}
			ms[0].Gateways = map[string]string{}
			return ms
		}, nil},
		{"a gateway of another network", func(ms []ClusterFacts) []ClusterFacts { ms[1].Gateways["istio-system/gwx"] = "net1"; return ms },
			[]string{`Service istio-system/gwx is the gateway of network "net1", but the cluster is on network "net2"`}},
		{"namespace label and values disagree", func(ms []ClusterFacts) []ClusterFacts { ms[0].NamespaceNetwork = "net9"; return ms },
			[]string{`label is "net9", but its values.global.network is "net1"`}},
		{"a cluster with nothing to say", func(ms []ClusterFacts) []ClusterFacts { ms[1] = ClusterFacts{Name: "c2"}; return ms },
			[]string{"cluster c2 has no Istio control plane nor a spec"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := findings(tc.edit(good()))
			var failed []string
			for _, r := range rs {
				if !r.Passed && r.Severity == Error {
					failed = append(failed, r.Message)
				}
			}
			for _, want := range tc.fails {
				found := false
				for _, f := range failed {
					found = found || strings.Contains(f, want)
				}
				if !found {
					t.Errorf("no failure says %q; failures: %q", want, failed)
				}
			}
			if len(tc.fails) == 0 && len(failed) > 0 {
				t.Errorf("failures %q, want none", failed)
			}
		})
	}
}

func TestMeshLoopbackLinkWarns(t *testing.T) {
	m := ClusterFacts{Name: "c1", Known: true, MeshValues: MeshValues{ClusterName: "cluster-1"}, Root: "r",
		LinkServers: map[string]string{"Secret istio-system/istio-remote-secret-cluster-2 key cluster-2": "https://127.0.0.1:6443"}}
	for _, r := range findings([]ClusterFacts{m}) {
		if r.Check == "mesh-link-server" && !r.Passed && r.Severity == Warning && strings.Contains(r.Message, "https://127.0.0.1:6443, a loopback address") {
			return
		}
	}
	t.Error("a link Secret with a loopback server gives no warning")
}

// findings runs every cross-cluster check over members, as RunCross does.
func findings(members []ClusterFacts) []Result {
	var out []Result
	for _, c := range CrossCluster() {
		for _, r := range c.Cross(members) {
			r.Check = c.ID
			if r.Severity == "" {
				r.Severity = c.Severity
			}
			out = append(out, r)
		}
	}
	return out
}

func TestMeshNoCACertsWarns(t *testing.T) {
	ms := []ClusterFacts{{Name: "c1", Known: true, MeshValues: MeshValues{ClusterName: "c1"}}, {Name: "c2", Known: true, MeshValues: MeshValues{ClusterName: "c2"}}}
	for _, r := range findings(ms) {
		if r.Check == "mesh-trust" && !r.Passed && r.Severity == Warning && strings.Contains(r.Message, "no cluster that runs istiod has a cacerts Secret") {
			return
		}
	}
	t.Error("no cacerts in any cluster gives no warning")
}
