package action

import (
	"context"

	"github.com/istioctl-installer/istioctl/operator/revision"
)

// ClusterVersions is the cluster's half of `istioctl version`: its Kubernetes version and
// its control planes. The client's half is the command layer's (the build's stamp).
type ClusterVersions struct {
	Kubernetes    string                  `json:"kubernetesVersion,omitempty"`
	ControlPlanes []revision.ControlPlane `json:"controlPlanes,omitempty"`
}

// Version asks the cluster for its versions.
type Version struct {
	*Config
}

// Run returns what the cluster answered; an error says why (part of) it is missing.
func (a *Version) Run(ctx context.Context) (*ClusterVersions, error) {
	rep := &ClusterVersions{}
	c, err := a.newClient()
	if err != nil {
		return rep, err
	}
	sv, err := c.ServerVersion(ctx)
	if err != nil {
		return rep, err
	}
	rep.Kubernetes = sv.GitVersion
	cps, err := revision.ControlPlanes(ctx, c, a.istioNamespace())
	if err != nil {
		return rep, err
	}
	rep.ControlPlanes = cps
	return rep, nil
}

// Namespace is where control planes are looked for.
func (a *Version) Namespace() string { return a.istioNamespace() }
