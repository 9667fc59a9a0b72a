package check

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/link"
)

// The cross-cluster checks (precheck --remote-contexts, and a fleet's precheck): whether
// the clusters of one mesh agree. Each member is a cluster with what its spec declares
// (the one being installed) or, left empty, what its installed control plane says.

// MeshMember is one cluster of a mesh, as MeshChecks takes it.
type MeshMember struct {
	// Context names it in messages (its kubeconfig context).
	Context string
	Client  *kube.Client
	// IstioNamespace is where its control plane lives (default istio-system).
	IstioNamespace string
	// Declared holds what a spec about to be installed there says; nil: read from the
	// cluster (the values ConfigMap istiod's chart writes, the namespace's network label).
	Declared *MeshValues
}

// MeshValues are the values the checks compare, as a spec declares them or a cluster shows.
type MeshValues struct {
	// ClusterName is values.global.multiCluster.clusterName ("" is the charts' Kubernetes).
	ClusterName, MeshID, Network string
	// Remote says the cluster runs no istiod of its own (profile remote).
	Remote bool
	// SharedCA says the spec declares a CA outside the clusters that signs for all of them
	// (spec.external.ca of type external or kubernetes), so no cacerts roots are compared.
	SharedCA bool
	// GatewayNetworks are the networks of the east-west gateways the spec renders (Services
	// labelled topology.istio.io/network).
	GatewayNetworks []string
}

// meshFacts is one member as read, for the pure part of the checks.
type meshFacts struct {
	Context string
	MeshValues
	// Known says a control plane (or a spec) said anything: a cluster with neither is
	// named once and left out of the comparisons.
	Known bool
	// NamespaceNetwork is the istio namespace's topology.istio.io/network label.
	NamespaceNetwork string
	// Gateways are the live gateway Services: namespace/name -> network label.
	Gateways map[string]string
	// Root is the SHA-256 of cacerts' root certificate ("" without a cacerts Secret);
	// RootSubject names it.
	Root, RootSubject string
	// LinkServers are the apiservers of its link Secrets: "Secret ns/name key" -> server.
	LinkServers map[string]string
}

const meshSection = "Mesh"

// defaultClusterName is what the charts call a cluster that sets no clusterName.
const defaultClusterName = link.DefaultClusterName

// MeshChecks runs the cross-cluster checks over members (at least two make a mesh) and
// returns their report. A member that cannot be read is an error result naming it.
func MeshChecks(ctx context.Context, members []MeshMember) *Report {
	var facts []meshFacts
	var results []Result
	for _, m := range members {
		f, err := readMember(ctx, m)
		if err != nil {
			results = append(results, Result{Check: "mesh-read", Section: meshSection, Severity: Error, Object: meshClusterObject(m.Context),
				Message: fmt.Sprintf("cannot read context %s: %v", m.Context, err)})
			continue
		}
		facts = append(facts, f)
	}
	results = append(results, meshFindings(facts)...)
	return report("precheck", results)
}

func meshClusterObject(ctx string) string { return "(Cluster " + ctx + ")" }

// readMember gathers what the checks compare of one cluster.
func readMember(ctx context.Context, m MeshMember) (meshFacts, error) {
	ns := m.IstioNamespace
	if ns == "" {
		ns = "istio-system"
	}
	f := meshFacts{Context: m.Context, Gateways: map[string]string{}, LinkServers: map[string]string{}}
	if m.Declared != nil {
		f.MeshValues, f.Known = *m.Declared, true
	} else {
		v, ok, err := installedValues(ctx, m.Client, ns)
		if err != nil {
			return f, err
		}
		f.MeshValues, f.Known = v, ok
	}
	nsObj := &unstructured.Unstructured{}
	nsObj.SetAPIVersion("v1")
	nsObj.SetKind("Namespace")
	nsObj.SetName(ns)
	live, err := m.Client.Get(ctx, nsObj)
	if err != nil {
		return f, err
	}
	if live != nil {
		f.NamespaceNetwork = live.GetLabels()[networkLabel]
	}
	svcs, err := m.Client.List(ctx, kube.ServiceGVK, networkLabel)
	if err != nil {
		return f, err
	}
	for _, s := range svcs {
		f.Gateways[s.GetNamespace()+"/"+s.GetName()] = s.GetLabels()[networkLabel]
	}
	secret := &unstructured.Unstructured{}
	secret.SetGroupVersionKind(kube.SecretGVK)
	secret.SetNamespace(ns)
	secret.SetName("cacerts")
	ca, err := m.Client.Get(ctx, secret)
	if err != nil {
		return f, err
	}
	if ca != nil {
		f.Root, f.RootSubject = rootOf(ca)
	}
	links, err := link.SecretsIn(ctx, m.Client, ns)
	if err != nil {
		return f, err
	}
	for i := range links {
		for _, l := range link.FromSecret(&links[i]) {
			f.LinkServers["Secret "+l.Secret()+" key "+l.ClusterID] = l.Server()
		}
	}
	return f, nil
}

const networkLabel = "topology.istio.io/network"

// installedValues reads the values the istiod chart recorded in its values ConfigMap
// (values, values-<rev>; every chart render has one, a remote's too); ok is false when
// none is there.
func installedValues(ctx context.Context, c *kube.Client, ns string) (MeshValues, bool, error) {
	cms, err := c.ListIn(ctx, kube.ConfigMapGVK, ns, "")
	if err != nil {
		return MeshValues{}, false, err
	}
	for _, cm := range cms {
		if cm.GetName() != "values" && !strings.HasPrefix(cm.GetName(), "values-") {
			continue
		}
		raw, _, _ := unstructured.NestedString(cm.Object, "data", "merged-values")
		var v struct {
			Global struct {
				MeshID       string `json:"meshID"`
				Network      string `json:"network"`
				MultiCluster struct {
					ClusterName string `json:"clusterName"`
				} `json:"multiCluster"`
			} `json:"global"`
			IstiodRemote struct {
				Enabled bool `json:"enabled"`
			} `json:"istiodRemote"`
		}
		if raw == "" || json.Unmarshal([]byte(raw), &v) != nil {
			continue
		}
		return MeshValues{ClusterName: v.Global.MultiCluster.ClusterName, MeshID: v.Global.MeshID, Network: v.Global.Network, Remote: v.IstiodRemote.Enabled}, true, nil
	}
	return MeshValues{}, false, nil
}

// rootOf fingerprints cacerts' root certificate (root-cert.pem, or ca.crt of a
// kubernetes.io/tls layout): only the digest and the subject leave here.
func rootOf(s *unstructured.Unstructured) (digest, subject string) {
	data, _, _ := unstructured.NestedStringMap(s.Object, "data")
	for _, k := range []string{"root-cert.pem", "ca.crt"} {
		b, err := decodeB64(data[k])
		if err != nil || len(b) == 0 {
			continue
		}
		block, _ := pem.Decode(b)
		if block == nil {
			return fmt.Sprintf("undecodable %x", sha256.Sum256(b)), "(not PEM)"
		}
		sum := sha256.Sum256(block.Bytes)
		return fmt.Sprintf("%x", sum[:8]), subjectOf(block.Bytes)
	}
	return "", ""
}

// meshFindings is the decision, without the clusters.
func meshFindings(members []meshFacts) []Result {
	var out []Result
	add := func(check string, sev Severity, obj string, passed bool, hint, format string, a ...any) {
		out = append(out, Result{Check: check, Section: meshSection, Severity: sev, Object: obj, Passed: passed, Hint: hint, Message: fmt.Sprintf(format, a...)})
	}
	var known []meshFacts
	for _, m := range members {
		if !m.Known {
			add("mesh-cluster-name", Error, meshClusterObject(m.Context), false, hintMesh+"mesh-cluster-name",
				"context %s has no Istio control plane nor a spec to say its cluster name, mesh ID and network: install it first, or leave it out", m.Context)
			continue
		}
		known = append(known, m)
	}

	// Names: unique, DNS-1123 labels, not the charts' default.
	byName := map[string][]string{}
	for _, m := range known {
		name := m.ClusterName
		obj := meshClusterObject(m.Context)
		switch {
		case name == "" || name == defaultClusterName:
			add("mesh-cluster-name", Error, obj, false, hintMesh+"mesh-cluster-name",
				"cluster name is %s, the charts' default: set values.global.multiCluster.clusterName to a name of its own (istio/istio#42516)", defaultClusterName)
			continue
		case len(validation.IsDNS1123Label(name)) > 0:
			add("mesh-cluster-name", Error, obj, false, hintMesh+"mesh-cluster-name",
				"cluster name %q is not a DNS-1123 label (%s): create-remote-secret and istiod's cluster registry need one", name, strings.Join(validation.IsDNS1123Label(name), "; "))
			continue
		}
		byName[name] = append(byName[name], m.Context)
	}
	for _, name := range sortedKeys(byName) {
		ctxs := byName[name]
		if len(ctxs) > 1 {
			add("mesh-cluster-name", Error, "(Clusters "+strings.Join(ctxs, ", ")+")", false, hintMesh+"mesh-cluster-name",
				"contexts %s all have cluster name %q: each cluster needs a name of its own (istiod registers one cluster per name)", strings.Join(ctxs, " and "), name)
		} else {
			add("mesh-cluster-name", Error, meshClusterObject(ctxs[0]), true, "", "cluster name %q is its own", name)
		}
	}

	// One mesh ID.
	meshes := map[string][]string{}
	for _, m := range known {
		meshes[m.MeshID] = append(meshes[m.MeshID], m.Context)
	}
	if len(meshes) > 1 {
		var parts []string
		for _, id := range sortedKeys(meshes) {
			shown := fmt.Sprintf("%q", id)
			if id == "" {
				shown = "unset (the trust domain)"
			}
			parts = append(parts, fmt.Sprintf("%s in %s", shown, strings.Join(meshes[id], ", ")))
		}
		add("mesh-id", Error, "(Mesh)", false, hintMesh+"mesh-id", "the clusters have %d mesh IDs: %s; set the same values.global.meshID in every cluster", len(meshes), strings.Join(parts, "; "))
	} else if len(known) > 0 {
		add("mesh-id", Error, "(Mesh)", true, "", "every cluster has mesh ID %q", known[0].MeshID)
	}

	out = append(out, networkFindings(known)...)
	out = append(out, trustFindings(known)...)

	for _, m := range members {
		for _, key := range sortedKeys(m.LinkServers) {
			if s := m.LinkServers[key]; link.Loopback(s) {
				add("mesh-link-server", Warning, meshClusterObject(m.Context), false, hintMesh+"mesh-link-server",
					"%s reaches its cluster at %s, a loopback address: only an istiod on this same host reaches it; give create-remote-secret --server an address the other cluster's pods can reach", key, s)
			}
		}
	}
	return out
}

// hintMesh + anchor is the section of the docs that says what a check proves.
const hintMesh = "docs/multicluster.md#"

// networkFindings: each cluster's namespace label agrees with its values, each gateway is
// labelled with its own cluster's network, and in a mesh of several networks every network
// has a gateway.
func networkFindings(known []meshFacts) []Result {
	var out []Result
	add := func(sev Severity, obj string, passed bool, format string, a ...any) {
		r := Result{Check: "mesh-network", Section: meshSection, Severity: sev, Object: obj, Passed: passed, Message: fmt.Sprintf(format, a...)}
		if !passed {
			r.Hint = hintMesh + "mesh-network"
		}
		out = append(out, r)
	}
	networks := map[string]bool{}
	gatewayOf := map[string][]string{}
	for _, m := range known {
		obj := meshClusterObject(m.Context)
		if m.Network != "" {
			networks[m.Network] = true
		}
		if m.NamespaceNetwork != "" && m.Network != "" && m.NamespaceNetwork != m.Network {
			add(Error, obj, false, "the istio namespace's %s label is %q, but its values.global.network is %q: pods not injected take the label's", networkLabel, m.NamespaceNetwork, m.Network)
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
				add(Error, obj, false, "%s is the gateway of network %q, but the cluster is on network %q: istiod would send %q's traffic here", g, n, m.Network, n)
				continue
			}
			gatewayOf[n] = append(gatewayOf[n], m.Context)
		}
	}
	if len(networks) < 2 {
		if len(networks) == 1 {
			add(Error, "(Mesh)", true, "one network: no east-west gateway is needed between the clusters")
		}
		return out
	}
	for _, n := range sortedKeys(networks) {
		if len(gatewayOf[n]) == 0 {
			add(Error, "(Network "+n+")", false, "network %q has no east-west gateway: the other networks cannot reach its endpoints; install one in a cluster on it (istioctl install --set profile=eastwest --set values.global.network=%s)", n, n)
		} else {
			add(Error, "(Network "+n+")", true, "network %q has an east-west gateway in %s", n, strings.Join(dedup(gatewayOf[n]), ", "))
		}
	}
	return out
}

// trustFindings: the clusters that run istiod sign with one root (cacerts in each, the
// same root), unless a shared CA is declared.
func trustFindings(known []meshFacts) []Result {
	var out []Result
	add := func(obj string, passed bool, format string, a ...any) {
		r := Result{Check: "mesh-trust", Section: meshSection, Severity: Error, Object: obj, Passed: passed, Message: fmt.Sprintf(format, a...)}
		if !passed {
			r.Hint = hintMesh + "mesh-trust"
		}
		out = append(out, r)
	}
	var signers []meshFacts
	shared := false
	for _, m := range known {
		shared = shared || m.SharedCA
		if !m.Remote {
			signers = append(signers, m)
		}
	}
	if shared {
		add("(Mesh)", true, "a shared CA is declared (spec.external.ca): no cacerts roots to compare")
		return out
	}
	roots := map[string][]string{}
	subjects := map[string]string{}
	for _, m := range signers {
		if m.Root == "" {
			add(meshClusterObject(m.Context), false, "has no cacerts Secret in its istio namespace: its istiod makes a root of its own, and cross-cluster mTLS fails; plug in a CA with a root shared by every cluster (or declare one: spec.external.ca)")
			continue
		}
		roots[m.Root] = append(roots[m.Root], m.Context)
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

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func dedup(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func decodeB64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

func subjectOf(der []byte) string {
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return "(not a certificate)"
	}
	return c.Subject.String()
}
