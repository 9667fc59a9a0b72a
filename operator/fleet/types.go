package fleet

import (
	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// The fleet file's identity: this project's own API, not upstream's.
const (
	Group      = "fleet.istioctl-installer.github.io"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version
	KindName   = "Fleet"
)

// Role is what a cluster is in the mesh.
type Role string

// The roles.
const (
	// RolePrimary runs its own istiod and reads every other cluster of the mesh.
	RolePrimary Role = "primary"
	// RoleRemote runs no istiod of its own: its proxies use its primary's.
	RoleRemote Role = "remote"
	// RoleExternal hosts the istiod of a config cluster (the external control plane
	// model); it is not in the mesh itself.
	RoleExternal Role = "external"
	// RoleConfig is the remote whose API server holds the mesh's config for its external
	// control plane.
	RoleConfig Role = "config"
)

// Roles are the roles, in the order the docs list them.
var Roles = []string{string(RolePrimary), string(RoleRemote), string(RoleConfig), string(RoleExternal)}

// ControlPlane says the role runs an istiod that reads other clusters.
func (r Role) ControlPlane() bool { return r == RolePrimary || r == RoleExternal }

// Fleet is a decoded, validated fleet file.
type Fleet struct {
	// Source is the file's name, as errors name it; Dir the directory paths are
	// relative to.
	Source, Dir string
	Name        string
	MeshID      string
	// CACerts is the one cacerts set every cluster gets; nil when each brings its own
	// (Cluster.CACerts) or none is given (each cluster's CA as it is).
	CACerts  *CACerts
	Shared   *spec.Doc
	Clusters []*Cluster
	// Warnings are the file's problems that are not errors (a deprecated field).
	Warnings v1alpha1.Problems

	// lines are the lines of the file's fields, by path (spec.clusters[1].name).
	lines map[string]int
}

// Cluster is one cluster of the fleet.
type Cluster struct {
	Name, Context, Network string
	Role                   Role
	// Primary names the cluster whose istiod serves a remote or config cluster.
	Primary string
	// RemotePilotAddress is the address a remote's proxies reach its primary's istiod at
	// (values.global.remotePilotAddress); "" when the install is to take it from the
	// primary's east-west gateway.
	RemotePilotAddress string
	// CACerts is this cluster's own cacerts set, when the fleet has no shared one.
	CACerts *CACerts
	Overlay *spec.Doc
	// Line is the line of the cluster's entry in the file.
	Line int
}

// CACerts is a cacerts set given as files: upstream's four file names in Dir.
type CACerts struct {
	// Dir is as the file wrote it; Files the four paths, resolved against the fleet
	// file's directory.
	Dir   string
	Files map[string]string
}

// CACertsFiles are the keys of a cacerts Secret, as istiod reads them, each from the file
// of the same name.
var CACertsFiles = []string{"ca-cert.pem", "ca-key.pem", "root-cert.pem", "cert-chain.pem"}

// Cluster returns the cluster of that name, nil when none.
func (f *Fleet) Cluster(name string) *Cluster {
	for _, c := range f.Clusters {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Served are the clusters whose primary is c (remotes and a config cluster).
func (f *Fleet) Served(c *Cluster) []*Cluster {
	var out []*Cluster
	for _, o := range f.Clusters {
		if o.Primary == c.Name {
			out = append(out, o)
		}
	}
	return out
}
