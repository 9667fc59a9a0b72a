package install

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/existing"
	"github.com/istioctl-installer/istioctl/operator/helmrelease"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
)

// ForeignObjects lists the rendered objects that exist without istioctl's ownership (its
// labels or its field manager), in a plan step before anything is written. It reads with
// the metadata lists the apply uses afterwards (one per kind and namespace), so it costs
// no request the install would not make anyway. Namespaces are shared and never counted;
// a kind the user may not list is skipped (precheck's permissions check names it).
func (in *Run) ForeignObjects(ctx context.Context, manifests []render.Manifest) ([]ownership.Foreign, error) {
	var out []ownership.Foreign
	err := in.eachExisting(ctx, manifests, func(o *unstructured.Unstructured, meta *metav1.PartialObjectMetadata) {
		if ownership.Ours(meta.Labels, meta.ManagedFields) {
			return
		}
		out = append(out, ownership.Foreign{
			Object:  ref.Of(o).String(),
			Manager: existing.Manager(meta.Labels, meta.Annotations, meta.ManagedFields),
			Helm:    meta.Annotations[helmrelease.AnnotationName] != "",
		})
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Object < out[j].Object })
	return out, nil
}

// HelmReleases lists, sorted, the Helm releases (namespace/name) that Helm's annotations
// on the rendered objects that exist name: the releases an install takes objects from, or
// took them from in an earlier run. It reads with the same metadata lists as
// ForeignObjects.
func (in *Run) HelmReleases(ctx context.Context, manifests []render.Manifest) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	err := in.eachExisting(ctx, manifests, func(_ *unstructured.Unstructured, meta *metav1.PartialObjectMetadata) {
		if name := meta.Annotations[helmrelease.AnnotationName]; name != "" {
			key := meta.Annotations[helmrelease.AnnotationNamespace] + "/" + name
			if !seen[key] {
				seen[key] = true
				out = append(out, key)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// eachExisting calls fn with every rendered object that exists (but Namespaces, which are
// shared) and what the metadata lists say of it; kinds the user may not list are skipped.
func (in *Run) eachExisting(ctx context.Context, manifests []render.Manifest, fn func(*unstructured.Unstructured, *metav1.PartialObjectMetadata)) error {
	for _, m := range manifests {
		for _, o := range m.Objects {
			if o.GetKind() == "Namespace" {
				continue
			}
			meta, err := in.before(ctx, o)
			if apierrors.IsForbidden(err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("reading what exists before installing: %w", err)
			}
			if meta != nil {
				fn(o, meta)
			}
		}
	}
	return nil
}
