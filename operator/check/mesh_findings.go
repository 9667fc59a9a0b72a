package check

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/istioctl-installer/istioctl/operator/link"
)

// The cross-cluster checks' decisions, without the clusters: each a function of every
// cluster's facts (CrossCluster lists them).

// known are the clusters a spec or a control plane says something of.
func known(members []ClusterFacts) []ClusterFacts {
	var out []ClusterFacts
	for _, m := range members {
		if m.Known {
			out = append(out, m)
		}
	}
	return out
}

// read are the known clusters whose live objects were read.
func read(members []ClusterFacts) []ClusterFacts {
	var out []ClusterFacts
	for _, m := range known(members) {
		if m.ReadErr == nil {
			out = append(out, m)
		}
	}
	return out
}

func crossRead(members []ClusterFacts) []Result {
	var out []Result
	for _, m := range members {
		if m.ReadErr != nil {
			out = append(out, Result{Object: meshClusterObject(m.Name), Message: fmt.Sprintf("cannot be read: %v; what it holds (network labels, gateways, cacerts, links) is not compared", m.ReadErr)})
		}
	}
	return out
}

// crossNames: every cluster has a name: set, not the charts' default, a DNS-1123 label, and
// no other cluster's. An external cluster's istiod takes its config cluster's name.
func crossNames(members []ClusterFacts) []Result {
	var out []Result
	add := func(obj string, passed bool, format string, a ...any) {
		out = append(out, Result{Object: obj, Passed: passed, Message: fmt.Sprintf(format, a...)})
	}
	byName := map[string][]string{}
	for _, m := range members {
		obj := meshClusterObject(m.Name)
		name := m.ClusterName
		switch {
		case !m.Known && m.ReadErr == nil:
			add(obj, false, "cluster %s has no Istio control plane nor a spec to say its cluster name, mesh ID and network: install it first, or leave it out", m.Name)
			continue
		case !m.Known || m.Role == "external":
			continue
		case name == "" || name == defaultClusterName:
			add(obj, false, "cluster name is %s, the charts' default: set values.global.multiCluster.clusterName to a name of its own (istio/istio#42516)", defaultClusterName)
			continue
		case len(validation.IsDNS1123Label(name)) > 0:
			add(obj, false, "cluster name %q is not a DNS-1123 label (%s): create-remote-secret and istiod's cluster registry need one", name, strings.Join(validation.IsDNS1123Label(name), "; "))
			continue
		}
		byName[name] = append(byName[name], m.Name)
	}
	for _, name := range sortedKeys(byName) {
		names := byName[name]
		if len(names) > 1 {
			add("(Clusters "+strings.Join(names, ", ")+")", false,
				"clusters %s all have cluster name %q: each cluster needs a name of its own (istiod registers one cluster per name)", strings.Join(names, " and "), name)
		} else {
			add(meshClusterObject(names[0]), true, "cluster name %q is its own", name)
		}
	}
	return out
}

// crossDistinct: no two clusters of the mesh are one cluster reached through two contexts
// (the same kube-system UID, link.ClusterUID): its istiod reads itself without a link, and
// a fleet tells its clusters apart by that identity.
func crossDistinct(members []ClusterFacts) []Result {
	byUID := map[string][]string{}
	for _, m := range members {
		if m.UID != "" {
			byUID[m.UID] = append(byUID[m.UID], m.Name)
		}
	}
	var out []Result
	for _, uid := range sortedKeys(byUID) {
		if names := byUID[uid]; len(names) > 1 {
			out = append(out, Result{Object: "(Clusters " + strings.Join(names, ", ") + ")", Message: fmt.Sprintf(
				"%s are one cluster (kube-system UID %s) reached through different contexts: name each cluster once", strings.Join(names, " and "), uid)})
		}
	}
	if len(out) == 0 && len(byUID) > 0 {
		out = append(out, Result{Object: "(Mesh)", Passed: true, Message: fmt.Sprintf("%d clusters, each one of its own", len(byUID))})
	}
	return out
}

// crossMeshID: one values.global.meshID in every cluster; an unset one counts as a
// different ID (it falls back to the trust domain).
func crossMeshID(members []ClusterFacts) []Result {
	meshes := map[string][]string{}
	ms := known(members)
	for _, m := range ms {
		meshes[m.MeshID] = append(meshes[m.MeshID], m.Name)
	}
	switch {
	case len(meshes) > 1:
		var parts []string
		for _, id := range sortedKeys(meshes) {
			shown := fmt.Sprintf("%q", id)
			if id == "" {
				shown = "unset (the trust domain)"
			}
			parts = append(parts, fmt.Sprintf("%s in %s", shown, strings.Join(meshes[id], ", ")))
		}
		return []Result{{Object: "(Mesh)", Message: fmt.Sprintf("the clusters have %d mesh IDs: %s; set the same values.global.meshID in every cluster", len(meshes), strings.Join(parts, "; "))}}
	case len(ms) > 0 && ms[0].MeshID == "":
		return []Result{{Object: "(Mesh)", Message: "no cluster sets a mesh ID (values.global.meshID): their proxies take the trust domain instead"}}
	case len(ms) > 0:
		return []Result{{Object: "(Mesh)", Passed: true, Message: fmt.Sprintf("every cluster has mesh ID %q", ms[0].MeshID)}}
	}
	return nil
}

// crossPrimaries: in a fleet, every remote's primary is a cluster of the mesh that runs
// istiod. Outside a fleet (no roles) there is nothing to compare.
func crossPrimaries(members []ClusterFacts) []Result {
	by := map[string]ClusterFacts{}
	for _, c := range members {
		by[c.Name] = c
	}
	var out []Result
	for _, c := range members {
		if c.Role == "" || c.ControlPlane {
			continue
		}
		p, ok := by[c.Primary]
		obj := meshClusterObject(c.Name)
		switch {
		case !ok:
			out = append(out, Result{Object: obj, Message: fmt.Sprintf("its primary %q is not a cluster of the mesh", c.Primary)})
		case !p.ControlPlane:
			out = append(out, Result{Object: obj, Message: fmt.Sprintf("its primary %q runs no istiod (it is a %s)", c.Primary, p.Role)})
		default:
			out = append(out, Result{Passed: true, Object: obj, Message: fmt.Sprintf("is served by %s's istiod", c.Primary)})
		}
	}
	return out
}

// crossNetworks: each cluster's namespace label agrees with its values, each gateway is
// labelled with its own cluster's network, and in a mesh of several networks every network
// has a gateway.
func crossNetworks(members []ClusterFacts) []Result {
	var out []Result
	add := func(obj string, passed bool, format string, a ...any) {
		out = append(out, Result{Object: obj, Passed: passed, Message: fmt.Sprintf(format, a...)})
	}
	networks := map[string]bool{}
	gatewayOf := map[string][]string{}
	for _, m := range known(members) {
		obj := meshClusterObject(m.Name)
		if m.Network != "" {
			networks[m.Network] = true
		}
		if m.NamespaceNetwork != "" && m.Network != "" && m.NamespaceNetwork != m.Network {
			add(obj, false, "the istio namespace's %s label is %q, but its values.global.network is %q: pods not injected take the label's", networkLabel, m.NamespaceNetwork, m.Network)
		}
		gws := map[string]string{}
		for k, v := range m.Gateways {
			gws["Service "+k] = v
		}
		for _, n := range m.GatewayNetworks {
			gws["the east-west gateway the spec installs"] = n
		}
		for _, g := range sortedKeys(gws) {
			n := gws[g]
			if m.Network != "" && n != m.Network {
				add(obj, false, "%s is the gateway of network %q, but the cluster is on network %q: istiod would send %q's traffic here", g, n, m.Network, n)
				continue
			}
			gatewayOf[n] = append(gatewayOf[n], m.Name)
		}
	}
	if len(networks) < 2 {
		if len(networks) == 1 {
			add("(Mesh)", true, "one network: no east-west gateway is needed between the clusters")
		}
		return out
	}
	for _, n := range sortedKeys(networks) {
		if len(gatewayOf[n]) == 0 {
			add("(Network "+n+")", false, "network %q has no east-west gateway: the other networks cannot reach its endpoints; install one in a cluster on it (istioctl install --set profile=eastwest --set values.global.network=%s)", n, n)
		} else {
			add("(Network "+n+")", true, "network %q has an east-west gateway in %s", n, strings.Join(dedup(gatewayOf[n]), ", "))
		}
	}
	return out
}

// crossTrust: the clusters that run istiod sign with one root (cacerts in each, the same
// root), unless a shared CA is declared; when none has a cacerts, a warning. A cluster that
// could not be read counts only with a declared root.
func crossTrust(members []ClusterFacts) []Result {
	var out []Result
	add := func(obj string, passed bool, format string, a ...any) {
		out = append(out, Result{Object: obj, Passed: passed, Message: fmt.Sprintf(format, a...)})
	}
	var signers []ClusterFacts
	shared := false
	for _, m := range known(members) {
		shared = shared || m.SharedCA
		if !m.Remote && (m.ReadErr == nil || m.Root != "") {
			signers = append(signers, m)
		}
	}
	if shared {
		add("(Mesh)", true, "a shared CA is declared (spec.external.ca): no cacerts roots to compare")
		return out
	}
	if rooted := 0; len(signers) > 1 {
		for _, m := range signers {
			if m.Root != "" {
				rooted++
			}
		}
		if rooted == 0 {
			// No CA plugged in anywhere installs and runs (upstream checks nothing here):
			// a warning, as the house warns where it is stricter than upstream.
			return []Result{{Object: "(Mesh)", Severity: Warning, Message: "no cluster that runs istiod has a cacerts Secret (nor does a fleet declare one): each istiod makes a root of its own, and cross-cluster mTLS fails until they share one; plug in a CA with one root in every cluster"}}
		}
	}
	roots := map[string][]string{}
	subjects := map[string]string{}
	for _, m := range signers {
		if m.Root == "" {
			add(meshClusterObject(m.Name), false, "has no cacerts Secret in its istio namespace: its istiod makes a root of its own, and cross-cluster mTLS fails; plug in a CA with a root shared by every cluster (or declare one: spec.external.ca)")
			continue
		}
		roots[m.Root] = append(roots[m.Root], m.Name)
		subjects[m.Root] = m.RootSubject
	}
	switch {
	case len(roots) > 1:
		var parts []string
		for _, r := range sortedKeys(roots) {
			parts = append(parts, fmt.Sprintf("%s (root %s, sha256 %s...)", strings.Join(roots[r], ", "), subjects[r], r))
		}
		add("(Mesh)", false, "the cacerts roots differ: %s; every cluster's cacerts needs the same root-cert.pem", strings.Join(parts, " vs "))
	case len(roots) == 1:
		for r := range roots {
			add("(Mesh)", true, "every istiod signs under one root (%s)", subjects[r])
		}
	}
	return out
}

// crossLinkServers warns of each link Secret whose apiserver is a loopback address.
func crossLinkServers(members []ClusterFacts) []Result {
	var out []Result
	for _, m := range read(members) {
		for _, key := range sortedKeys(m.LinkServers) {
			if s := m.LinkServers[key]; link.Loopback(s) {
				out = append(out, Result{Object: meshClusterObject(m.Name),
					Message: fmt.Sprintf("%s reaches its cluster at %s, a loopback address: only an istiod on this same host reaches it", key, s)})
			}
		}
	}
	return out
}
