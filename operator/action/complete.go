package action

import (
	"context"

	"github.com/istioctl-installer/istioctl/operator/complete"
	"github.com/istioctl-installer/istioctl/operator/kubeflags"
)

// Completion answers shell completion: names from the cluster (each question under its own
// short timeout, with no candidates and no error when the cluster does not answer) and from
// the kubeconfig, the profiles and the spec's paths.
type Completion struct {
	Kube           *kubeflags.Flags
	IstioNamespace string
}

// Revisions are the installed control plane revisions.
func (c *Completion) Revisions(ctx context.Context) []string { return complete.Revisions(ctx, c.Kube) }

// Tags are the revision tags.
func (c *Completion) Tags(ctx context.Context) []string {
	return complete.Tags(ctx, c.Kube, c.IstioNamespace)
}

// Records are the install record numbers of a revision, with their descriptions.
func (c *Completion) Records(ctx context.Context, rev string) []string {
	return complete.Records(ctx, c.Kube, c.IstioNamespace, rev)
}

// Namespaces are the cluster's namespaces.
func (c *Completion) Namespaces(ctx context.Context) []string {
	return complete.Namespaces(ctx, c.Kube)
}

// Contexts, Clusters and Users are the kubeconfig's.
func (c *Completion) Contexts() []string { return complete.Contexts(c.Kube) }

// Clusters are the kubeconfig's clusters.
func (c *Completion) Clusters() []string { return complete.Clusters(c.Kube) }

// Users are the kubeconfig's users.
func (c *Completion) Users() []string { return complete.Users(c.Kube) }

// Profiles are the profile names of the built-in profiles or of manifestsDir's.
func (c *Completion) Profiles(manifestsDir string) []string { return complete.Profiles(manifestsDir) }

// SetPaths completes a --set word: spec paths, profile names after profile=, revisions
// after revision=; final says the candidate ends the word.
func (c *Completion) SetPaths(word string, profiles []string, revisions func() []string) ([]string, bool) {
	return complete.SetPaths(word, profiles, revisions)
}
