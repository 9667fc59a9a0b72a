package install

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/istioctl-installer/istioctl/operator/existing"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
)

// Foreign is an object the install would apply that exists and that istioctl did not
// install: applying it would take it from whoever manages it.
type Foreign struct {
	// Object is Kind/namespace/name.
	Object string
	// Manager says who manages it ("Helm release istio-system/istiod", "field manager
	// kubectl-create").
	Manager string
	// Helm says a Helm release lists it: that release would still delete it.
	Helm bool
}

// ForeignObjects lists the rendered objects that exist without istioctl's ownership (its
// labels or its field manager), in a plan step before anything is written. It reads with
// the metadata lists the apply uses afterwards (one per kind and namespace), so it costs
// no request the install would not make anyway. Namespaces are shared and never counted;
// a kind the user may not list is skipped (precheck's permissions check names it).
func (in *Installer) ForeignObjects(ctx context.Context, manifests []render.Manifest) ([]Foreign, error) {
	var out []Foreign
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
				return nil, fmt.Errorf("reading what exists before installing: %w", err)
			}
			if meta == nil || ownership.Ours(meta.Labels, meta.ManagedFields) {
				continue
			}
			out = append(out, Foreign{
				Object:  kube.Describe(o),
				Manager: existing.Manager(meta.Labels, meta.Annotations, meta.ManagedFields),
				Helm:    meta.Annotations["meta.helm.sh/release-name"] != "",
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Object < out[j].Object })
	return out, nil
}
