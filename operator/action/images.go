package action

import (
	"context"
	"fmt"

	"github.com/istioctl-installer/istioctl/operator/images"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/mirror"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// ImagesList is x images list: the images a spec's install needs (every component's and the
// proxy istiod injects), or with FromCluster those pods run now.
type ImagesList struct {
	*Config
	Spec        spec.Options
	FromCluster bool
}

// Run lists the images. A spec with images outside Config.AllowedRegistries is an
// *images.OutsideError.
func (a *ImagesList) Run(ctx context.Context) ([]images.Image, error) {
	if a.FromCluster {
		client, err := a.connect(ctx)
		if err != nil {
			return nil, err
		}
		pods, err := client.List(ctx, kube.PodGVK, "")
		if err != nil {
			return nil, fmt.Errorf("listing pods: %w", err)
		}
		return images.FromPods(pods), nil
	}
	return a.specImages(a.Spec)
}

// specImages renders a spec and lists its images (render refuses those outside
// Config.AllowedRegistries).
func (a *ImagesList) specImages(opts spec.Options) ([]images.Image, error) {
	res, ms, err := a.render(opts, false)
	if err != nil {
		return nil, err
	}
	return images.FromManifests(res.Tree, ms)
}

// checkAllowed refuses images outside the allowed registries (none given: all allowed).
func checkAllowed(list []images.Image, allowed []string) error {
	if len(allowed) == 0 {
		return nil
	}
	out, err := images.Outside(list, allowed)
	if err != nil {
		return err
	}
	if len(out) > 0 {
		return &images.OutsideError{Allowed: allowed, Images: out}
	}
	return nil
}

// DefaultMirrorParallel is how many images a mirror copies at once by default.
const DefaultMirrorParallel = mirror.DefaultParallel

// ImagesMirror is x images mirror: the images a spec's install needs (or given ones),
// copied to another registry by digest.
type ImagesMirror struct {
	*Config
	Spec spec.Options
	// Images, when not empty, are copied instead of the spec's.
	Images   []string
	To       string
	Parallel int
	DryRun   bool
	Event    func(mirror.Event)
}

// Run copies the images; the error names every image not copied and its registry.
func (a *ImagesMirror) Run(ctx context.Context) (mirror.Result, error) {
	refs := a.Images
	if len(refs) == 0 {
		list, err := (&ImagesList{Config: a.Config}).specImages(a.Spec)
		if err != nil {
			return mirror.Result{}, err
		}
		refs = images.Unique(list)
	}
	return mirror.Run(ctx, mirror.Options{To: a.To, Images: refs, Parallel: a.Parallel, DryRun: a.DryRun, Event: a.Event})
}
