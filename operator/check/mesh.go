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

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/link"
)

// What the cross-cluster checks (CrossCluster) read of each cluster of one mesh: what its
// spec declares (the one being installed, a fleet's clusters) or, with none, what its
// installed control plane says; and what the cluster holds (network labels, gateways,
// cacerts, link Secrets).

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
	// labelled topology.istio.io/network) or the fleet installs.
	GatewayNetworks []string
	// RootPEM is the root-cert.pem of the cacerts the install writes (a fleet's cacerts
	// files); nil: the cluster's cacerts Secret is compared.
	RootPEM []byte
}

// ClusterFacts is one cluster as read, for the pure part of the checks.
type ClusterFacts struct {
	// Name names it in messages; Role, Primary and ControlPlane as ClusterInput's.
	Name, Role, Primary string
	ControlPlane        bool
	MeshValues
	// Known says a control plane (or a spec) said anything: a cluster with neither is
	// named once and left out of the comparisons.
	Known bool
	// ReadErr says the cluster could not be read: it is left out of the comparisons of
	// what the cluster holds.
	ReadErr error
	// NamespaceNetwork is the istio namespace's topology.istio.io/network label.
	NamespaceNetwork string
	// Gateways are the live gateway Services: namespace/name -> network label.
	Gateways map[string]string
	// Root is the SHA-256 of the root certificate (declared, or cacerts'; "" without
	// either); RootSubject names it.
	Root, RootSubject string
	// LinkServers are the apiservers of its link Secrets: "Secret ns/name key" -> server.
	LinkServers map[string]string
	// UID is the cluster's identity (link.ClusterUID); "" when it could not be read.
	UID string
}

// defaultClusterName is what the charts call a cluster that sets no clusterName.
const defaultClusterName = link.DefaultClusterName

func meshClusterObject(name string) string { return "(Cluster " + name + ")" }

// readMember gathers what the checks compare of one cluster.
func readMember(ctx context.Context, m ClusterInput) ClusterFacts {
	f := ClusterFacts{Name: m.Name, Role: m.Role, Primary: m.Primary, ControlPlane: m.ControlPlane,
		Gateways: map[string]string{}, LinkServers: map[string]string{}}
	if m.Declared != nil {
		f.MeshValues, f.Known = *m.Declared, true
		if m.Declared.RootPEM != nil {
			f.Root, f.RootSubject = rootOfPEM(m.Declared.RootPEM)
		}
	}
	if m.Client == nil {
		f.ReadErr = m.Unreachable
		if f.ReadErr == nil {
			f.ReadErr = fmt.Errorf("no client")
		}
		return f
	}
	if err := readLive(ctx, m, &f); err != nil {
		f.ReadErr = err
	}
	return f
}

// readLive reads, into f, what the cluster holds.
func readLive(ctx context.Context, m ClusterInput, f *ClusterFacts) error {
	ns := m.IstioNamespace
	if ns == "" {
		ns = "istio-system"
	}
	if m.Declared == nil {
		v, ok, err := installedValues(ctx, m.Client, ns)
		if err != nil {
			return err
		}
		f.MeshValues, f.Known = v, ok
	}
	// Its identity only tells two contexts of one cluster apart: one that cannot be read
	// leaves the cluster out of that comparison, not out of the others.
	f.UID, _ = link.ClusterUID(ctx, m.Client)
	nsObj := &unstructured.Unstructured{}
	nsObj.SetAPIVersion("v1")
	nsObj.SetKind("Namespace")
	nsObj.SetName(ns)
	live, err := m.Client.Get(ctx, nsObj)
	if err != nil {
		return err
	}
	if live != nil {
		f.NamespaceNetwork = live.GetLabels()[networkLabel]
	}
	svcs, err := m.Client.List(ctx, kube.ServiceGVK, networkLabel)
	if err != nil {
		return err
	}
	for _, s := range svcs {
		f.Gateways[s.GetNamespace()+"/"+s.GetName()] = s.GetLabels()[networkLabel]
	}
	if f.Root == "" {
		secret := &unstructured.Unstructured{}
		secret.SetGroupVersionKind(kube.SecretGVK)
		secret.SetNamespace(ns)
		secret.SetName("cacerts")
		ca, err := m.Client.Get(ctx, secret)
		if err != nil {
			return err
		}
		if ca != nil {
			f.Root, f.RootSubject = rootOf(ca)
		}
	}
	links, err := link.SecretsIn(ctx, m.Client, ns)
	if err != nil {
		return err
	}
	for i := range links {
		for _, l := range link.FromSecret(&links[i]) {
			f.LinkServers["Secret "+l.Secret()+" key "+l.ClusterID] = l.Server()
		}
	}
	return nil
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
		return rootOfPEM(b)
	}
	return "", ""
}

// rootOfPEM fingerprints a root certificate's PEM.
func rootOfPEM(b []byte) (digest, subject string) {
	block, _ := pem.Decode(b)
	if block == nil {
		return fmt.Sprintf("undecodable %x", sha256.Sum256(b)), "(not PEM)"
	}
	sum := sha256.Sum256(block.Bytes)
	return fmt.Sprintf("%x", sum[:8]), subjectOf(block.Bytes)
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
