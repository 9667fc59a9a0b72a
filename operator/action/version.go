package action

import (
	"context"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// VersionReport is what `istioctl version` prints, in every output format.
type VersionReport struct {
	Client        version.Info        `json:"clientVersion"`
	Kubernetes    string              `json:"kubernetesVersion,omitempty"`
	ControlPlanes []kube.ControlPlane `json:"controlPlanes,omitempty"`
}

// Version gathers the client's version and, when Remote, the cluster's.
type Version struct {
	*Config
	Remote bool
}

// Run returns the report; with Remote, an error says why the cluster's part is missing (the
// report still holds the client's version, as kubectl version prints it).
func (a *Version) Run(ctx context.Context) (*VersionReport, error) {
	rep := &VersionReport{Client: version.Get()}
	if !a.Remote {
		return rep, nil
	}
	c, err := a.Client()
	if err != nil {
		return rep, err
	}
	sv, err := c.ServerVersion(ctx)
	if err != nil {
		return rep, err
	}
	rep.Kubernetes = sv.GitVersion
	cps, err := c.ControlPlanes(ctx, a.istioNamespace())
	if err != nil {
		return rep, err
	}
	rep.ControlPlanes = cps
	return rep, nil
}

// Namespace is where control planes are looked for.
func (a *Version) Namespace() string { return a.istioNamespace() }
