package action

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/external"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/images"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// resolve resolves a spec, saying its warnings (also when it does not resolve).
func (c *Config) resolve(opts spec.Options) (*spec.Resolved, error) {
	res, err := spec.Resolve(opts)
	if res != nil {
		for _, p := range res.Warnings {
			c.warn(p.Error())
		}
	}
	return res, err
}

// render resolves and renders a spec (only the given components, if any), saying the
// spec's and the charts' warnings.
//
// lazy is for printing only: CRD bodies are left unparsed and objects printed ahead
// (render.Renderer.LazyCRDs and Printed; render.Print prints the result).
func (c *Config) render(opts spec.Options, lazy bool, only ...component.Name) (*spec.Resolved, []render.Manifest, error) {
	res, err := c.resolve(opts)
	if err != nil {
		return res, nil, err
	}
	r, err := render.NewRenderer(res.IOP.Spec.InstallPackagePath)
	if err != nil {
		return res, nil, err
	}
	r.LazyCRDs, r.Printed = lazy, lazy
	manifests, warnings, err := r.Render(res, only...)
	for _, w := range warnings {
		c.warn(w)
	}
	if err == nil && len(c.AllowedRegistries) > 0 {
		err = c.checkRegistries(res, manifests)
	}
	return res, manifests, err
}

// checkRegistries refuses a render with an image outside c.AllowedRegistries.
func (c *Config) checkRegistries(res *spec.Resolved, manifests []render.Manifest) error {
	list, err := images.FromManifests(res.Tree, manifests)
	if err != nil {
		return err
	}
	return checkAllowed(list, c.AllowedRegistries)
}

// ownerOf is the ownership identity of a resolved spec's install.
func (c *Config) ownerOf(res *spec.Resolved) ownership.Owner {
	return ownership.OwnerOf(res.IOP, c.Version, external.FromSpec(res.IOP).Relied)
}

// recordNamespace is where a spec's install records live.
func recordNamespace(res *spec.Resolved) string { return res.IOP.ComponentsNamespace() }

// identities are the objects' identities an install record keeps.
func identities(manifests []render.Manifest) ([]history.ObjectRef, int) {
	var objs []*unstructured.Unstructured
	for _, m := range manifests {
		objs = append(objs, m.Objects...)
	}
	return history.Identities(objs)
}

// renderRecord resolves a record's spec with this istioctl (its profiles and charts) and
// renders it.
func (c *Config) renderRecord(r *history.Record) (*spec.Resolved, []render.Manifest, error) {
	if strings.TrimSpace(r.Spec) == "" {
		return nil, nil, fmt.Errorf("install record %d of revision %s holds no spec", r.Number, r.Revision)
	}
	res, manifests, err := c.render(spec.Options{Files: []string{"-"}, Stdin: strings.NewReader(r.Spec)}, false)
	if err != nil {
		return nil, nil, fmt.Errorf("the spec of install record %d of revision %s does not resolve with istioctl %s: %w", r.Number, r.Revision, c.Version, err)
	}
	if history.Rev(res.IOP.Spec.Revision) != history.Rev(r.Revision) {
		return nil, nil, fmt.Errorf("the spec of install record %d names revision %s, not %s: the record was edited", r.Number, history.Rev(res.IOP.Spec.Revision), history.Rev(r.Revision))
	}
	// The images run by the digests the install pinned them to.
	return res, manifests, images.Pin(manifests, r.Digests)
}

// pinFromRecord pins a spec's rendered images to the digests the revision's last
// successful install kept (install --pin-digests), so that verify-install compares with
// what was applied and reports an image whose digest differs from the record. A history
// that cannot be read pins nothing (drift then shows the digests).
func (c *Config) pinFromRecord(ctx context.Context, client *kube.Client, res *spec.Resolved, manifests []render.Manifest) error {
	recs, err := (&history.Store{Client: client, Namespace: recordNamespace(res)}).List(ctx, c.ownerOf(res).Rev())
	if err != nil {
		return nil
	}
	if last := history.LastSucceeded(recs); last != nil && last.Untrusted() == nil {
		return images.Pin(manifests, last.Digests)
	}
	return nil
}
