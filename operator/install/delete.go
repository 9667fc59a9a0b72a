package install

import (
	"context"
	"errors"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// removalBatches splits objs (in removal order) into the batches that may be deleted at
// once: consecutive objects of the same removal rank.
func removalBatches(objs []*unstructured.Unstructured) [][]*unstructured.Unstructured {
	var out [][]*unstructured.Unstructured
	for i, o := range objs {
		if i == 0 || removalRank(o) != removalRank(objs[i-1]) {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], o)
	}
	return out
}

// InRemovalOrder returns objs sorted by removal rank (stable: same-rank objects keep their
// order).
func InRemovalOrder(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := append([]*unstructured.Unstructured(nil), objs...)
	sort.SliceStable(out, func(i, j int) bool { return removalRank(out[i]) < removalRank(out[j]) })
	return out
}

// deleteAll deletes objs concurrently, bounded by Options.Concurrency, and returns the ones
// deleted, in objs' order. When ctx ends it starts no new delete, but those in flight
// finish: a run always knows what went.
//
// then, when not nil, is called with each object deleted, as soon as its delete returned
// (on the delete's goroutine: it must not block).
func (in *pass) deleteAll(ctx context.Context, objs []*unstructured.Unstructured, dryRun bool, then func(*unstructured.Unstructured)) ([]*unstructured.Unstructured, error) {
	sem := make(chan struct{}, in.concurrency())
	done := make([]bool, len(objs))
	errs := make([]error, len(objs))
	var wg sync.WaitGroup
	for i, o := range objs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = in.Client.Delete(context.WithoutCancel(ctx), o, dryRun)
			done[i] = errs[i] == nil
			if done[i] && then != nil {
				then(o)
			}
		}()
	}
	wg.Wait()
	var deleted []*unstructured.Unstructured
	for i, o := range objs {
		if done[i] {
			deleted = append(deleted, o)
		}
	}
	return deleted, errors.Join(errs...)
}

// removeBatch deletes a batch (deleteAll) and emits a pruned event for each object that
// went, in the batch's order, with action (Pruned or Removed); it returns what went and
// its changes. then is deleteAll's.
func (in *pass) removeBatch(ctx context.Context, batch []*unstructured.Unstructured, dryRun bool, action Action, then func(*unstructured.Unstructured)) ([]*unstructured.Unstructured, []Change, error) {
	went, err := in.deleteAll(ctx, batch, dryRun, then)
	changes := make([]Change, len(went))
	for i, o := range went {
		changes[i] = Change{Object: ref.Of(o).String(), Component: o.GetLabels()[ownership.LabelComponent], Action: action, DryRun: dryRun}
		in.events.Emit(changes[i].Event(event.Event{}))
	}
	return went, changes, err
}
