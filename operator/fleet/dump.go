package fleet

import (
	"fmt"
	"sort"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Dump is what fleet dump prints: each cluster's IstioOperator and what else it gets, and
// the links. It holds no credential and no key: cacerts files are named, never read.
type Dump struct {
	Fleet    string        `json:"fleet"`
	MeshID   string        `json:"meshID"`
	Trust    string        `json:"trust"`
	Clusters []DumpCluster `json:"clusters"`
	Links    []DumpLink    `json:"links"`
}

// DumpCluster is one cluster's part of the dump.
type DumpCluster struct {
	Name    string `json:"name"`
	Context string `json:"context"`
	Role    string `json:"role"`
	Network string `json:"network,omitempty"`
	Primary string `json:"primary,omitempty"`
	// Namespace is the istio namespace with the labels and annotations upstream's guides
	// put on it.
	Namespace DumpNamespace `json:"namespace"`
	// CACerts is the cacerts Secret the cluster gets, and the files each key is read from.
	CACerts *DumpCACerts `json:"cacerts,omitempty"`
	// Notes say what the install fills in that the file cannot know.
	Notes         []string       `json:"notes,omitempty"`
	IstioOperator map[string]any `json:"istioOperator"`
	// EastWest is the IstioOperator of its east-west gateway's own install, when it gets one.
	EastWest map[string]any `json:"eastWest,omitempty"`
}

// DumpNamespace is a namespace's name and the metadata the fleet puts on it.
type DumpNamespace struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// DumpCACerts is a cacerts Secret: where it goes and the file each key comes from.
type DumpCACerts struct {
	Secret string            `json:"secret"`
	Files  map[string]string `json:"files"`
}

// DumpLink is one link Secret.
type DumpLink struct {
	Secret      string            `json:"secret"`
	Into        string            `json:"into"`
	IntoContext string            `json:"intoContext"`
	From        string            `json:"from"`
	FromContext string            `json:"fromContext"`
	Type        string            `json:"type"`
	DataKey     string            `json:"dataKey"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	// Command is the single-cluster command that makes the same link by hand.
	Command string `json:"command"`
}

// Namespace is the istio namespace of a resolved spec.
func Namespace(res *spec.Resolved) string {
	if ns := res.IOP.Metadata.Namespace; ns != "" {
		return ns
	}
	if v, ok := spec.Lookup(res.Tree, "spec", "values", "global", "istioNamespace"); ok {
		if s, _ := v.(string); s != "" {
			return s
		}
	}
	return ownership.DefaultNamespace
}

// Dump is the dump of the fleet, from each cluster's resolved spec (by cluster name).
func (f *Fleet) Dump(resolved map[string]*spec.Resolved) *Dump {
	ns := func(c *Cluster) string { return Namespace(resolved[c.Name]) }
	d := &Dump{Fleet: f.Name, MeshID: f.MeshID, Trust: f.trust(), Clusters: []DumpCluster{}, Links: []DumpLink{}}
	for _, c := range f.Clusters {
		dc := DumpCluster{Name: c.Name, Context: c.Context, Role: string(c.Role), Network: c.Network, Primary: c.Primary,
			Namespace: DumpNamespace{Name: ns(c)}, IstioOperator: resolved[c.Name].Tree}
		if c.Network != "" {
			dc.Namespace.Labels = map[string]string{ownership.LabelNetwork: c.Network}
		}
		if c.Role == RoleRemote || c.Role == RoleConfig {
			dc.Namespace.Annotations = map[string]string{ownership.AnnotationControlPlaneClusters: c.Primary}
			if c.RemotePilotAddress == "" {
				dc.Notes = append(dc.Notes, fmt.Sprintf("values.global.remotePilotAddress is filled in at install: the address of %s's east-west gateway", c.Primary))
			}
		}
		if cc := f.CACertsOf(c); cc != nil {
			files := map[string]string{}
			for _, k := range CACertsFiles {
				files[k] = strings.TrimSuffix(cc.Dir, "/") + "/" + k
			}
			dc.CACerts = &DumpCACerts{Secret: ns(c) + "/cacerts", Files: files}
		}
		if ew, ok := f.EastWest(c, resolved[c.Name].IOP.Spec.Revision); ok {
			if res, err := spec.Resolve(ew); err == nil {
				dc.EastWest = res.Tree
			}
		}
		d.Clusters = append(d.Clusters, dc)
	}
	for _, l := range f.Links(ns) {
		d.Links = append(d.Links, DumpLink{
			Secret: l.Secret.Namespace + "/" + l.Secret.Name, Into: l.Into.Name, IntoContext: l.Into.Context,
			From: l.From.Name, FromContext: l.From.Context, Type: string(l.Type), DataKey: l.Key,
			Labels: l.Secret.Labels, Annotations: l.Secret.Annotations, Command: l.Command(),
		})
	}
	return d
}

// Command is the single-cluster command that makes the link by hand.
func (l Link) Command() string {
	cmd := fmt.Sprintf("istioctl create-remote-secret --context %s --name %s", l.From.Context, l.From.Name)
	if l.Type != "remote" {
		cmd += " --type " + string(l.Type)
	}
	if l.Secret.Namespace != ownership.DefaultNamespace {
		cmd += " -n " + l.Secret.Namespace
	}
	return cmd + " --apply-to " + l.Into.Context
}

// CACertsOf is the cacerts set cluster c gets, nil for none.
func (f *Fleet) CACertsOf(c *Cluster) *CACerts {
	if f.CACerts != nil {
		return f.CACerts
	}
	return c.CACerts
}

func (f *Fleet) trust() string {
	switch {
	case f.CACerts != nil:
		return "one cacerts set for every cluster, from " + f.CACerts.Dir
	case len(f.Clusters) > 0 && f.Clusters[0].CACerts != nil:
		return "each cluster's own cacerts set (they must share one root)"
	}
	return "each cluster's CA as it is (no cacerts Secret is made): cross-cluster mTLS needs the clusters' CAs to share one root"
}

// Names are the clusters' names, sorted.
func (f *Fleet) Names() []string {
	var out []string
	for _, c := range f.Clusters {
		out = append(out, c.Name)
	}
	sort.Strings(out)
	return out
}
