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

// still is the rule a run's deletes were decided by (SelectStale for a prune, Inventory's
// for an uninstall), asked again of the live copy of an object that changed after the plan
// read it: whether it is still the run's to delete.
type still = func(live *unstructured.Unstructured) bool

// keptObject is an object a delete left: planned as the plan read it, live as it is now.
type keptObject struct{ planned, live *unstructured.Unstructured }

// deleteAll deletes objs concurrently, bounded by Options.Concurrency, each as the plan
// read it (kube.Client.DeleteAsJudged: one that changed since is judged again by rule, one
// re-created by someone else is left), and returns the ones deleted and the ones left, in
// objs' order. When ctx ends it starts no new delete, but those in flight finish: a run
// always knows what went.
//
// then, when not nil, is called with each object deleted, as soon as its delete returned
// (on the delete's goroutine: it must not block).
func (in *pass) deleteAll(ctx context.Context, objs []*unstructured.Unstructured, dryRun bool, rule still, then func(*unstructured.Unstructured)) ([]*unstructured.Unstructured, []keptObject, error) {
	sem := make(chan struct{}, in.concurrency())
	done := make([]bool, len(objs))
	left := make([]*unstructured.Unstructured, len(objs))
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
			left[i], errs[i] = in.Client.DeleteAsJudged(context.WithoutCancel(ctx), o, dryRun, rule)
			done[i] = errs[i] == nil && left[i] == nil
			if done[i] && then != nil {
				then(o)
			}
		}()
	}
	wg.Wait()
	var deleted []*unstructured.Unstructured
	var kept []keptObject
	for i, o := range objs {
		if done[i] {
			deleted = append(deleted, o)
		}
		if left[i] != nil {
			kept = append(kept, keptObject{o, left[i]})
		}
	}
	return deleted, kept, errors.Join(errs...)
}

// WhyKept says why a delete left an object the plan read as planned and that the cluster
// now holds as live: re-created by someone else (another UID), opted out of pruning, or no
// longer ours by the rule that chose it.
func WhyKept(planned, live *unstructured.Unstructured) event.KeptReason {
	if live.GetUID() != planned.GetUID() {
		return event.KeptRecreated
	}
	if _, ok := live.GetLabels()[ownership.LabelNotPruned]; ok {
		return event.KeptOptOut
	}
	return event.KeptNotOurs
}

// KeptEvent is the kept event of an object a delete left.
func KeptEvent(planned, live *unstructured.Unstructured) event.Event {
	return event.Event{Type: event.Kept, Object: ref.Of(planned).String(), Component: planned.GetLabels()[ownership.LabelComponent],
		KeptChange: event.KeptChange{KeptReason: WhyKept(planned, live)}}
}

// removeBatch deletes a batch (deleteAll) and emits, in the batch's order, a pruned event
// for each object that went, with action (Pruned or Removed), and a kept event for each
// object left; it returns what went, its changes, and whether the batch was stopped before
// every object was judged. rule and then are deleteAll's.
func (in *pass) removeBatch(ctx context.Context, batch []*unstructured.Unstructured, dryRun bool, action Action, rule still, then func(*unstructured.Unstructured)) ([]*unstructured.Unstructured, []Change, bool, error) {
	went, kept, err := in.deleteAll(ctx, batch, dryRun, rule, then)
	changes := make([]Change, len(went))
	for i, o := range went {
		changes[i] = Change{Object: ref.Of(o).String(), Component: o.GetLabels()[ownership.LabelComponent], Action: action, DryRun: dryRun}
		in.events.Emit(changes[i].Event(event.Event{}))
	}
	for _, k := range kept {
		in.events.Emit(KeptEvent(k.planned, k.live))
	}
	return went, changes, len(went)+len(kept) < len(batch), err
}
