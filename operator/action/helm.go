package action

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/helmrelease"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// RetireHelmReleasesFlag is the flag that asks an install to retire the Helm releases it
// empties; messages name it.
const RetireHelmReleasesFlag = "--retire-helm-releases"

// HelmRelease is a Helm release that lists objects an install applies: a Helm install the
// install takes over (or took over in an earlier run).
type HelmRelease struct {
	// Release is namespace/name.
	Release string
	// Records are its release records (Kind/namespace/name): what retiring it deletes.
	Records []string
	// Kept lists the objects the release lists that the install neither applies nor owns:
	// while one is left, the release is not retired.
	Kept []string

	rel *helmrelease.Release
}

// Emptied says the install leaves the release nothing of its own: retiring it loses
// nothing.
func (h HelmRelease) Emptied() bool { return len(h.Kept) == 0 }

// planHelm finds the Helm releases whose annotations the rendered objects carry and reads
// their records. With RetireHelmReleases it also says, for each, what it lists that this
// install will not own: the objects it neither renders nor writes for the default tag, that
// exist and are not already istioctl's. Without, a release whose records cannot be read
// (no permission to list Secrets) is still named, from the annotations alone.
func (a *Install) planHelm(ctx context.Context, p *InstallPlan) error {
	releases, err := p.apply.HelmReleases(ctx, p.manifests)
	if err != nil || len(releases) == 0 {
		return err
	}
	var owned map[ref.Ref]bool
	for _, key := range releases {
		ns, name, _ := strings.Cut(key, "/")
		rel, err := helmrelease.Get(ctx, p.client, ns, name)
		switch {
		case err != nil && !a.RetireHelmReleases:
			p.HelmReleases = append(p.HelmReleases, HelmRelease{Release: key})
			continue
		case err != nil:
			return err
		case rel == nil:
			continue // annotations naming a release that has no records left
		}
		h := HelmRelease{Release: rel.Key(), Records: rel.Records, rel: rel}
		if a.RetireHelmReleases {
			if owned == nil {
				if owned, err = a.ownedAfter(ctx, p); err != nil {
					return err
				}
			}
			if h.Kept, err = kept(ctx, p.client, rel, owned); err != nil {
				return err
			}
		}
		p.HelmReleases = append(p.HelmReleases, h)
	}
	return nil
}

// ownedAfter are the identities of what the install owns once it ran: what it renders and
// what it writes for the default revision tag.
func (a *Install) ownedAfter(ctx context.Context, p *InstallPlan) (map[ref.Ref]bool, error) {
	owned := map[ref.Ref]bool{}
	for _, m := range p.manifests {
		for _, o := range m.Objects {
			owned[ref.Of(o)] = true
		}
	}
	tagObjects, err := p.defaultTag.Objects(ctx, p.client)
	if err != nil {
		return nil, err
	}
	for _, o := range tagObjects {
		owned[ref.Of(o)] = true
	}
	return owned, nil
}

// kept lists what a release lists that exists, is not owned and is not istioctl's already.
func kept(ctx context.Context, c *kube.Client, rel *helmrelease.Release, owned map[ref.Ref]bool) ([]string, error) {
	var out []string
	for _, o := range rel.Objects {
		so, err := rel.Scoped(c, o)
		if err != nil {
			return nil, err
		}
		if owned[so.Ref()] {
			continue
		}
		meta, err := c.GetMeta(ctx, so.GVK(), so.Namespace, so.Name)
		if err != nil {
			return nil, err
		}
		if meta != nil && !ownership.Ours(meta.Labels, meta.ManagedFields) {
			out = append(out, so.Ref().String())
		}
	}
	return out, nil
}

// helmWarnings are said before the install writes: without RetireHelmReleases, the
// releases left listing objects this install owns; with it, the releases it cannot retire.
func (a *Install) helmWarnings(p *InstallPlan, events event.Sink) {
	if !a.RetireHelmReleases {
		var names []string
		for _, h := range p.HelmReleases {
			names = append(names, h.Release)
		}
		if len(names) > 0 {
			events.Emit(event.Event{Type: event.Warning, Message: fmt.Sprintf(
				"Helm release(s) %s still list objects this install owns: helm list shows them deployed, and helm uninstall or upgrade would delete or change those objects. "+
					"Retire them (delete their release records, leave the objects) with %s", strings.Join(names, ", "), RetireHelmReleasesFlag)})
		}
		return
	}
	for _, h := range p.HelmReleases {
		if !h.Emptied() {
			events.Emit(event.Event{Type: event.Warning, Object: h.Release, Details: h.Kept, Message: fmt.Sprintf(
				"Helm release %s is not retired: it also lists %d object(s) this install neither applies nor owns (below); remove them, or leave the release", h.Release, len(h.Kept))})
		}
	}
}

// retireError is a run whose install succeeded and whose retiring of Helm releases did
// not: nothing to roll back.
type retireError struct{ err error }

func (e *retireError) Error() string {
	return fmt.Sprintf("the install succeeded, but retiring the Helm releases did not: %v; run the same install again to retire them", e.err)
}
func (e *retireError) Unwrap() error { return e.err }

// retireHelm retires, once the install succeeded, each Helm release it emptied: it checks
// again that nothing the release lists is left to anyone but istioctl, deletes the
// release's records and removes Helm's release annotations from the objects, so neither
// Helm nor a person reading them takes them for the release's. A dry run only asks the
// server whether it could.
func (a *Install) retireHelm(ctx context.Context, p *InstallPlan, events event.Sink) error {
	if !a.RetireHelmReleases {
		return nil
	}
	for _, h := range p.HelmReleases {
		if !h.Emptied() {
			continue
		}
		if err := a.retire(ctx, p.client, h, events); err != nil {
			return &retireError{err}
		}
		e := event.Event{Type: event.HelmReleaseRetired, Object: h.Release, Details: h.Records, DryRun: a.DryRun,
			Message: fmt.Sprintf("deleted its %d release record(s); its objects are this install's", len(h.Records))}
		if a.DryRun {
			e.Message = fmt.Sprintf("its %d release record(s) would be deleted", len(h.Records))
		}
		events.Emit(e)
	}
	return nil
}

// retire checks, deletes the records, then removes the annotations: once the records are
// gone the release is retired, and an annotation left behind (a warning) misleads no tool.
func (a *Install) retire(ctx context.Context, c *kube.Client, h HelmRelease, events event.Sink) error {
	type annotated struct {
		gvk       schema.GroupVersionKind
		namespace string
		name      string
	}
	var strip []annotated
	var left []string
	for _, o := range h.rel.Objects {
		so, err := h.rel.Scoped(c, o)
		if err != nil {
			return err
		}
		meta, err := c.GetMeta(ctx, so.GVK(), so.Namespace, so.Name)
		if err != nil {
			return err
		}
		if meta == nil {
			continue
		}
		if !a.DryRun && !ownership.Ours(meta.Labels, meta.ManagedFields) {
			left = append(left, so.Ref().String())
		}
		if meta.Annotations[helmrelease.AnnotationName] == h.rel.Name && meta.Annotations[helmrelease.AnnotationNamespace] == h.rel.Namespace {
			strip = append(strip, annotated{so.GVK(), so.Namespace, so.Name})
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("Helm release %s still lists objects istioctl does not own after the install: %s", h.Release, strings.Join(left, ", "))
	}
	kept, err := helmrelease.Retire(ctx, c, h.rel, a.DryRun)
	for _, l := range kept {
		events.Emit(install.KeptEvent(l.Planned, l.Live))
	}
	if err != nil {
		return err
	}
	for _, s := range strip {
		err := c.RemoveAnnotations(ctx, s.gvk, s.namespace, s.name, []string{helmrelease.AnnotationName, helmrelease.AnnotationNamespace}, a.DryRun)
		if err != nil {
			events.Emit(event.Event{Type: event.Warning, Message: fmt.Sprintf(
				"Helm release %s is retired, but its annotations stay on an object (harmless; kubectl annotate it with %s- %s-): %v",
				h.Release, helmrelease.AnnotationName, helmrelease.AnnotationNamespace, err)})
		}
	}
	return nil
}

// helmDiff says how the Helm releases of two plans differ.
func helmDiff(shown, now []HelmRelease) []string {
	was := map[string]bool{}
	for _, h := range shown {
		was[h.Release] = h.Emptied()
	}
	var out []string
	for _, h := range now {
		switch emptied, ok := was[h.Release]; {
		case !ok:
			out = append(out, "Helm release "+h.Release+": not planned, now listing objects this install applies")
		case emptied != h.Emptied():
			out = append(out, fmt.Sprintf("Helm release %s: emptied by this install: planned %v, now %v", h.Release, emptied, h.Emptied()))
		}
		delete(was, h.Release)
	}
	for r := range was {
		out = append(out, "Helm release "+r+": planned, now gone")
	}
	sort.Strings(out)
	return out
}
