package install

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/rollout"
)

// The node-by-node rollout of an upgrade's DaemonSets (operator/rollout), wired into a
// component's stage: the DaemonSet goes out with OnDelete, the rest of the stage is waited
// for, the pods are replaced node batch by node batch, then the DaemonSet is applied as
// rendered (its own update strategy back, the rollout's annotation gone) and waited for.

// isDaemonSet says o is an apps/v1 DaemonSet.
func isDaemonSet(o *unstructured.Unstructured) bool {
	return o.GroupVersionKind() == kube.DaemonSetGVK
}

// nodeByNode swaps, in an upgrade, each DaemonSet of objs whose pods the apply would replace
// (or whose earlier rollout is unfinished) for its OnDelete form; rolls are those
// DaemonSets as rendered, for roll.
func (in *pass) nodeByNode(ctx context.Context, objs []*unstructured.Unstructured) (out, rolls []*unstructured.Unstructured, err error) {
	if !in.Opts.Upgrade || in.Opts.DryRun {
		return objs, nil, nil
	}
	out = append([]*unstructured.Unstructured(nil), objs...)
	for i, o := range objs {
		if !isDaemonSet(o) {
			continue
		}
		batches, err := rollout.Plan(ctx, in.Client, o, in.Opts.NodeBatch)
		if err != nil {
			return nil, nil, err
		}
		if len(batches) > 0 {
			out[i] = rollout.OnDelete(o)
			rolls = append(rolls, o)
		}
	}
	return out, rolls, nil
}

// without is objs but those rolls names.
func without(objs, rolls []*unstructured.Unstructured) []*unstructured.Unstructured {
	if len(rolls) == 0 {
		return objs
	}
	skip := map[string]bool{}
	for _, r := range rolls {
		skip[ref.Of(r).String()] = true
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if !skip[ref.Of(o).String()] {
			out = append(out, o)
		}
	}
	return out
}

// roll replaces the pods of each DaemonSet of rolls node batch by node batch, then applies
// it as rendered and waits for it.
func (in *pass) roll(ctx context.Context, rolls []*unstructured.Unstructured, ev event.Event) error {
	for _, ds := range rolls {
		r := &rollout.Rollout{Client: in.Client, Batch: in.Opts.NodeBatch, Events: in.events, Base: ev, Timeout: in.Opts.Timeout}
		if err := r.Run(ctx, ds); err != nil {
			return err
		}
		res, err := in.Client.Apply(ctx, ds, kube.ApplyOptions{})
		if err != nil {
			return err
		}
		if err := in.wait(ctx, []*unstructured.Unstructured{ds}, map[string]*unstructured.Unstructured{ref.Of(ds).String(): res.Live}, ev); err != nil {
			return err
		}
	}
	return nil
}

// NodeBatches are, for each component of manifests (by key) with a DaemonSet an upgrade
// rolls node by node, the node batches it would replace, read from the cluster now (no
// write; a dry run's plan shows them too). nil outside an upgrade.
func (r *Run) NodeBatches(ctx context.Context, manifests []render.Manifest) (map[string][][]string, error) {
	if !r.Opts.Upgrade {
		return nil, nil
	}
	out := map[string][][]string{}
	for _, m := range manifests {
		for _, o := range m.Objects {
			if !isDaemonSet(o) {
				continue
			}
			b, err := rollout.Plan(ctx, r.Client, withLabels(o, r.Owner.Labels(m.Instance.Name)), r.Opts.NodeBatch)
			if err != nil {
				return nil, err
			}
			out[m.Instance.Key()] = append(out[m.Instance.Key()], b...)
		}
	}
	return out, nil
}
