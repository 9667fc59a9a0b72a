package action

import (
	"context"
	"fmt"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// meshReport is precheck's cross-cluster part: this cluster with what the spec declares,
// and each of RemoteContexts with what its installed control plane says.
func (a *Check) meshReport(ctx context.Context, client *kube.Client, res *spec.Resolved, manifests []render.Manifest) (*check.Report, error) {
	self, err := link.ClusterUID(ctx, client)
	if err != nil {
		return nil, err
	}
	here := "the current context"
	if a.Kube != nil && a.Kube.Context != "" {
		here = a.Kube.Context
	}
	members := []check.ClusterInput{{Name: here, Context: here, Client: client, IstioNamespace: res.IOP.IstioNamespace(), Declared: DeclaredMesh(res, manifests)}}
	for _, name := range a.RemoteContexts {
		rc, err := a.contextClient(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("--remote-contexts %s: %w", name, err)
		}
		uid, err := link.ClusterUID(ctx, rc)
		if err != nil {
			return nil, fmt.Errorf("--remote-contexts %s: %w", name, err)
		}
		if uid == self {
			return nil, &UsageError{Err: fmt.Errorf("--remote-contexts %s is the cluster being checked: name the other clusters of the mesh", name)}
		}
		members = append(members, check.ClusterInput{Name: name, Context: name, Client: rc, IstioNamespace: res.IOP.IstioNamespace()})
	}
	return check.RunCross(ctx, a.Command, check.CrossCluster(), members), nil
}

// DeclaredMesh is what a resolved spec (and its rendered manifests, nil when not rendered)
// says of the values the cross-cluster checks compare.
func DeclaredMesh(res *spec.Resolved, manifests []render.Manifest) *check.MeshValues {
	str := func(keys ...string) string {
		v, _ := spec.Lookup(res.IOP.Spec.Values, keys...)
		s, _ := v.(string)
		return s
	}
	remote, _ := spec.Lookup(res.IOP.Spec.Values, "istiodRemote", "enabled")
	v := &check.MeshValues{
		ClusterName: str("global", "multiCluster", "clusterName"),
		MeshID:      str("global", "meshID"),
		Network:     str("global", "network"),
		Remote:      remote == true || str("profile") == "remote",
	}
	if ext := res.IOP.Spec.External; ext != nil && ext.CA != nil {
		v.SharedCA = ext.CA.Type == v1alpha1.CAExternal || ext.CA.Type == v1alpha1.CAKubernetes
	}
	for _, o := range render.All(manifests) {
		if n := o.GetLabels()[spec.LabelNetwork]; o.GetKind() == "Service" && n != "" {
			v.GatewayNetworks = append(v.GatewayNetworks, n)
		}
	}
	return v
}
