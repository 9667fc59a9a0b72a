package install

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
)

// PruneKinds are the kinds an install prunes (CRDs never: deleting one deletes every
// resource of its kind).
var PruneKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Version: "v1", Kind: "ResourceQuota"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
	{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding"},
	// The east-west gateway's expose objects (Istio CRs; none is listed while their CRDs
	// are not installed).
	{Group: "networking.istio.io", Version: "v1", Kind: "Gateway"},
	{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"},
}

// Stale lists the objects this install owns in the cluster that the new render does not
// contain.
func (in *Run) Stale(ctx context.Context, manifests []render.Manifest) ([]*unstructured.Unstructured, error) {
	live, err := Inventory(ctx, in.Client, PruneKinds, in.Owner.Selector())
	if err != nil {
		return nil, fmt.Errorf("finding objects to prune: %w", err)
	}
	return SelectStale(in.Owner, manifests, live)
}

// SelectStale is the prune decision, without the cluster: of the live objects (any kinds,
// any labels, in any order), those owner owns that manifests no longer render. An object
// is owner's when it is of a PruneKinds kind (never a CRD), carries owner's labels
// (Owner.Selector: the managed label, owner's namespace, revision and name, a known
// component, no opt-out), has no owner reference and was server-side applied by us (not a
// controller's or another tool's copy of our labels). Stale lists through Inventory, so the
// checks are repeated here to make the decision whole.
func SelectStale(owner ownership.Owner, manifests []render.Manifest, live []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	sel, err := labels.Parse(owner.Selector())
	if err != nil {
		return nil, fmt.Errorf("the ownership selector %q: %w", owner.Selector(), err)
	}
	want := map[ref.Ref]bool{}
	for _, m := range manifests {
		for _, o := range m.Objects {
			want[ref.Of(o)] = true
		}
	}
	var stale []*unstructured.Unstructured
	for _, o := range live {
		if pruneKind(o.GroupVersionKind().GroupKind()) && sel.Matches(labels.Set(o.GetLabels())) &&
			!want[ref.Of(o)] && ownership.AppliedByUs(o) {
			stale = append(stale, o)
		}
	}
	return stale, nil
}

// staleStill is SelectStale for one object that changed since the plan read it.
func staleStill(owner ownership.Owner, manifests []render.Manifest) still {
	return func(live *unstructured.Unstructured) bool {
		again, err := SelectStale(owner, manifests, []*unstructured.Unstructured{live})
		return err == nil && len(again) == 1
	}
}

func pruneKind(gk schema.GroupKind) bool {
	for _, k := range PruneKinds {
		if k.GroupKind() == gk {
			return true
		}
	}
	return false
}

// prune deletes stale, each as the plan read it, and waits until what went is gone. An
// object that changed since the plan is judged again by SelectStale with the same
// manifests; one it no longer selects, or that someone re-created, is left and named.
func (in *pass) prune(ctx context.Context, manifests []render.Manifest, stale []*unstructured.Unstructured) ([]Change, error) {
	rule := staleStill(in.Owner, manifests)
	// As an uninstall: dependents and webhook configurations first, a batch of one rank at
	// once.
	stale = InRemovalOrder(stale)
	var changes []Change
	var gone []*unstructured.Unstructured
	for _, batch := range removalBatches(stale) {
		went, c, stopped, err := in.removeBatch(ctx, batch, in.Opts.DryRun, Pruned, rule, nil)
		changes = append(changes, c...)
		gone = append(gone, went...)
		if err != nil {
			return changes, err
		}
		if stopped {
			return changes, ctx.Err()
		}
	}
	if !in.Opts.DryRun {
		// Done means gone: an install right after must not find them half-deleted.
		if err := in.waitGone(ctx, gone, in.Owner.Selector()); err != nil {
			return changes, err
		}
	}
	return changes, nil
}
