package tag

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// MovedMessage is upstream's notice when an install of the default revision takes the
// default tag back from a revision.
const MovedMessage = "This installation will make default injection and validation pointing to the default revision, and originally it was pointing to the revisioned one."

// InstallDefault is what an install does about the default revision tag, as upstream:
// unless values.global.operatorManageWebhooks is set, an install of the default revision
// (always) or of a revision (when no default tag exists yet) points the default tag at its
// revision once it is installed.
type InstallDefault struct {
	// Needed says the install sets the default tag.
	Needed bool
	// Revision is the install's revision ("default" for the default one).
	Revision string
	// Current is the revision the default tag points at before the install ("": none).
	Current        string
	IstioNamespace string
	ManifestsDir   string
	AutoInject     bool
	// Labels are the install's ownership labels; the tag's objects carry them and the
	// not-pruned opt-out, so the install never prunes them and an uninstall of the revision
	// (or a purge) removes them.
	Labels map[string]string
	// injectors are the revision's injectors the install renders.
	injectors []*unstructured.Unstructured
}

// ForInstall decides, before an install applies manifests, whether it sets the default
// tag. When it does and the install is of the default revision, the revision's own
// injector is in the manifests; it goes out deactivated (upstream deactivates it right
// after the install) whenever that stops no injection: a default tag already serves the
// default namespaces, or the live injector is missing or already deactivated. A re-install
// then writes it exactly as the last one did. Otherwise it goes out active, and Run
// deactivates it once the tag exists.
func ForInstall(ctx context.Context, c *kube.Client, res *spec.Resolved, manifests []render.Manifest, labels map[string]string) (*InstallDefault, error) {
	d := &InstallDefault{Revision: revName(res.IOP.Spec.Revision), IstioNamespace: res.IOP.OwnerNamespace(),
		ManifestsDir: res.IOP.Spec.InstallPackagePath, Labels: labels}
	if v, _ := spec.Lookup(res.Tree, "spec", "values", "global", "operatorManageWebhooks"); v == true {
		return d, nil
	}
	if v, _ := spec.Lookup(res.Tree, "spec", "values", "sidecarInjectorWebhook", "enableNamespacesByDefault"); v == true {
		d.AutoInject = true
	}
	// Only an install that renders its revision's injector can be tagged.
	var injectors []*unstructured.Unstructured
	for _, m := range manifests {
		for _, o := range m.Objects {
			if o.GetKind() == "MutatingWebhookConfiguration" && o.GetLabels()[LabelRev] == d.Revision {
				if _, tagged := o.GetLabels()[LabelTag]; !tagged {
					injectors = append(injectors, o)
				}
			}
		}
	}
	if len(injectors) == 0 {
		return d, nil
	}
	d.injectors = injectors
	tags, err := c.List(ctx, kube.MutatingWebhookGVK, "app=sidecar-injector,"+LabelTag+"="+Default)
	if err != nil {
		return nil, err
	}
	exists := len(tags) > 0
	if exists {
		d.Current = tags[0].GetLabels()[LabelRev]
	}
	d.Needed = !exists || d.Revision == Default
	if !d.Needed || d.Revision != Default {
		return d, nil
	}
	for _, o := range injectors {
		live, err := c.Get(ctx, o)
		if err != nil {
			return nil, err
		}
		if exists || live == nil || Deactivated(live) {
			Deactivate(o)
		}
	}
	return d, nil
}

// Foresee is what Run will write, from reads only (nil unless Needed): the tag rendered
// against the revision's injector as it runs, or, while the revision does not run yet, as
// the install renders it.
func (d *InstallDefault) Foresee(ctx context.Context, c *kube.Client) (*Plan, error) {
	if !d.Needed {
		return nil, nil
	}
	return d.generate(ctx, c, d.injectors)
}

// Objects are the objects setting the default tag writes: none unless Needed.
func (d *InstallDefault) Objects(ctx context.Context, c *kube.Client) ([]*unstructured.Unstructured, error) {
	p, err := d.Foresee(ctx, c)
	if p == nil || err != nil {
		return nil, err
	}
	return p.Objects, nil
}

// generate renders the tag against the revision's live injector, else against installing.
func (d *InstallDefault) generate(ctx context.Context, c *kube.Client, installing []*unstructured.Unstructured) (*Plan, error) {
	p, err := Generate(ctx, c, Options{
		Tag: Default, Revision: d.Revision, IstioNamespace: d.IstioNamespace, ManifestsDir: d.ManifestsDir,
		AutoInjectNamespaces: d.AutoInject, Overwrite: true, Labels: d.Labels, Installing: installing,
	})
	if err != nil {
		return nil, fmt.Errorf("setting the default revision tag: %w", err)
	}
	return p, nil
}

// Run points the default tag at the installed revision, emitting an applied event per
// object written and a revision-tag event that says where the tag points. It returns what
// it did to each object, for the install's counts.
func (d *InstallDefault) Run(ctx context.Context, c *kube.Client, events event.Sink) ([]Change, error) {
	p, err := d.generate(ctx, c, nil)
	if err != nil {
		return nil, err
	}
	changes, err := p.Apply(ctx, c, false)
	for _, ch := range changes {
		events.Emit(event.Event{Type: event.Applied, Object: ch.Object,
			ObjectChange: event.ObjectChange{Status: ch.Status, Action: ch.Action}})
	}
	if err != nil {
		return changes, fmt.Errorf("setting the default revision tag: %w", err)
	}
	e := event.Event{Type: event.RevisionTag, Object: ref.Of(p.Objects[0]).String(),
		Message:   fmt.Sprintf("Default revision tag points at revision %q", d.Revision),
		TagChange: event.TagChange{TagOutcome: event.TagUnchanged}}
	switch {
	case p.Previous == "":
		e.TagOutcome = event.TagCreated
	case p.Previous != d.Revision:
		e.TagOutcome = event.TagMoved
		e.Message = fmt.Sprintf("Default revision tag moved from revision %q to %q", p.Previous, d.Revision)
		if d.Revision == Default {
			e.Details = []string{MovedMessage}
		}
	default:
		for _, ch := range changes {
			if ch.Action != event.ActionUnchanged {
				e.TagOutcome = event.TagConfigured
			}
		}
	}
	events.Emit(e)
	return changes, nil
}
