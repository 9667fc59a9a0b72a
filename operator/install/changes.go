package install

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
)

// The actions a plan foresees for an object.
const (
	WillCreate    = "create"
	WillConfigure = "configure"
	WillSkip      = "unchanged"
	WillPrune     = "prune"
)

// Change is what a plan foresees for one object.
type Change struct {
	// Object is Kind/namespace/name.
	Object    string
	Component string
	// Action is WillCreate, WillConfigure (the server decides whether anything changes),
	// WillSkip (the object is as we would apply it: no write) or WillPrune.
	Action string
}

// Changes foresees, from what the metadata lists say exists (the same lists the apply
// reuses, so no request the install would not make), what applying manifests and pruning
// stale would do to each object. The namespaces a run creates for its components are not
// among them.
func (in *Installer) Changes(ctx context.Context, manifests []render.Manifest, stale []*unstructured.Unstructured) ([]Change, error) {
	var out []Change
	for _, m := range manifests {
		labels := in.Owner.Labels(m.Instance.Name)
		for _, o := range m.Objects {
			c := Change{Object: kube.Describe(o), Component: m.Instance.Key(), Action: WillCreate}
			before, err := in.before(ctx, o)
			switch {
			case apierrors.IsForbidden(err):
				// Not allowed to list the kind: the apply reads the object itself.
				c.Action = WillConfigure
			case err != nil:
				return nil, fmt.Errorf("reading what exists before installing: %w", err)
			case before != nil:
				c.Action = WillConfigure
				if same, err := kube.Unchanged(withLabels(o, labels), before); err != nil {
					return nil, err
				} else if same {
					c.Action = WillSkip
				}
			}
			out = append(out, c)
		}
	}
	for _, o := range stale {
		out = append(out, Change{Object: kube.Describe(o), Component: o.GetLabels()[ownership.LabelComponent], Action: WillPrune})
	}
	return out, nil
}

// withLabels is a copy of o carrying labels as well: what the install applies.
func withLabels(o *unstructured.Unstructured, labels map[string]string) *unstructured.Unstructured {
	o = o.DeepCopy()
	l := o.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	for k, v := range labels {
		l[k] = v
	}
	o.SetLabels(l)
	return o
}
