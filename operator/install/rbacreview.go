package install

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/objdiff"
	"github.com/istioctl-installer/istioctl/operator/render"
)

// RBACChange is how the run would change what one Role, ClusterRole or binding grants:
// objdiff.RBAC's lines.
type RBACChange struct {
	// Object is Kind/namespace/name.
	Object string
	Lines  []string
}

// RBACChanges says, before anything is written, how applying manifests and pruning stale
// would change what the cluster's Roles, ClusterRoles and bindings grant: each rendered
// RBAC object against its live self (read whole, one request each), and each stale one
// pruned. Objects whose grants stay the same are left out. What a restore re-installs
// (a rollback, install --atomic) shows this before it writes: a record's overlays and
// values can widen what istiod may do.
func (in *Run) RBACChanges(ctx context.Context, manifests []render.Manifest, stale []*unstructured.Unstructured) ([]RBACChange, error) {
	var out []RBACChange
	add := func(o, live, next *unstructured.Unstructured) error {
		lines, err := objdiff.RBAC(live, next)
		if err == nil && len(lines) > 0 {
			out = append(out, RBACChange{Object: ref.Of(o).String(), Lines: lines})
		}
		return err
	}
	for _, m := range manifests {
		for _, o := range m.Objects {
			if o.GroupVersionKind().Group != rbacv1.GroupName {
				continue
			}
			live, err := in.Client.Get(ctx, o)
			if err != nil {
				return nil, err
			}
			if err := add(o, live, o); err != nil {
				return nil, err
			}
		}
	}
	for _, o := range stale {
		if o.GroupVersionKind().Group != rbacv1.GroupName {
			continue
		}
		live, err := in.Client.Get(ctx, o)
		if err != nil {
			return nil, err
		}
		if err := add(o, live, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}
