package action

import (
	"context"
	"fmt"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/images"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/mirror"
	"github.com/istioctl-installer/istioctl/operator/render"
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

// pinSource is the record whose digests --pin-digests takes: last, when it is sealed; an
// untrusted one is said and not used (every image is resolved again).
func pinSource(last *history.Record, events event.Sink) *history.Record {
	if last == nil {
		return nil
	}
	if err := last.Untrusted(); err != nil {
		events.Emit(event.Event{Type: event.Warning, Message: fmt.Sprintf(
			"--pin-digests does not take the digests of install record %d, and resolves each image again: %v", last.Number, err)})
		return nil
	}
	return last
}

// pinDigests pins the manifests' images to digests: those the last successful record kept
// (so a re-run does not follow a tag that moved), the others resolved at the registry each
// image is pulled from. It returns the digests of every image now pinned.
func pinDigests(ctx context.Context, res *spec.Resolved, ms []render.Manifest, last *history.Record) (map[string]string, error) {
	list, err := images.FromManifests(res.Tree, ms)
	if err != nil {
		return nil, err
	}
	digests := map[string]string{}
	for _, ref := range images.Unique(list) {
		if images.IsPinned(ref) {
			continue
		}
		if last != nil && last.Digests[ref] != "" {
			digests[ref] = last.Digests[ref]
			continue
		}
		d, err := mirror.Resolve(ctx, ref, nil)
		if err != nil {
			return nil, fmt.Errorf("--pin-digests: %w", err)
		}
		digests[ref] = d.String()
	}
	return digests, images.Pin(ms, digests)
}
