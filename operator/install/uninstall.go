package install

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// UninstallOptions say what to remove.
type UninstallOptions struct {
	// Purge removes every revision and Base (CRDs included), not just one revision's
	// control plane and gateways.
	Purge  bool
	DryRun bool
	// Timeout bounds the wait for the deleted objects to be gone.
	Timeout time.Duration
}

// Targets lists what an uninstall would remove, in removal order.
func (in *Run) Targets(ctx context.Context, opts UninstallOptions) ([]*unstructured.Unstructured, error) {
	selector := in.Owner.UninstallSelector(opts.Purge)
	// A purge's CRDs are listed beside the rest, metadata only: their bodies (1.6 MB of
	// JSON for Istio's) are not needed to delete them (kube.Client.crdResource).
	var crds []*unstructured.Unstructured
	var crdErr error
	var listed sync.WaitGroup
	if opts.Purge {
		listed.Go(func() { crds, crdErr = InventoryMetadata(ctx, in.Client, kube.CRDGVK, selector) })
	}
	out, err := Inventory(ctx, in.Client, PruneKinds, selector)
	listed.Wait()
	if err != nil {
		return nil, err
	}
	if crdErr != nil {
		return nil, crdErr
	}
	out = append(out, crds...)
	if opts.Purge {
		// And what istiod wrote: it goes last, once istiod has stopped.
		ws, err := istiodWrites(ctx, in.Client, append(istiodNamespaces(out), in.Owner.Namespace))
		if err != nil {
			return nil, err
		}
		out = append(out, ws...)
	}
	out = InRemovalOrder(out)
	if opts.Purge && !opts.DryRun {
		// The CRDs' watch caches start as soon as the CRDs are known, beside the rest of
		// the plan and the first removals, so that they are ready by the time the CRDs are
		// deleted (startWatchCaches).
		in.cachesStarted = in.startWatchCaches(ctx, out, false)
	}
	return out, nil
}

// removable is Targets' rule, for one object that changed since Targets read it: of the
// kinds listed, one istioctl applied with labels selector matches (Inventory), or one
// istiod wrote.
func removable(selector string) (still, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("the uninstall selector %q: %w", selector, err)
	}
	return func(live *unstructured.Unstructured) bool {
		return istiodWrite(live) || (sel.Matches(labels.Set(live.GetLabels())) && ownership.AppliedByUs(live))
	}, nil
}

// removalRank orders deletion as the reverse of installation: dependents first, webhooks
// before the workloads that serve them (so nothing is left calling a gone service), CRDs
// last.
func removalRank(o *unstructured.Unstructured) int {
	comp := component.Name(o.GetLabels()[ownership.LabelComponent])
	rank := 0
	for i, c := range component.All {
		if c.Name == comp {
			rank = (len(component.All) - i) * 10
		}
	}
	switch o.GetKind() {
	case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicyBinding":
		return rank - 5
	case "CustomResourceDefinition":
		return 1000
	}
	if istiodWrite(o) {
		return 2000
	}
	return rank
}

// A CRD's finalizer deletes its instances before the CRD goes. When it cannot list them
// (the apiserver answers "storage is (re)initializing" for a while after a CRD changes,
// longer on a loaded machine) it retries with exponential back-off, 5 ms doubling per
// failure: after a dozen failures the next try is minutes away, and an uninstall waited up
// to 292 s on one CRD. Any update of the CRD other than its Terminating condition makes the
// finalizer try again at once, so a CRD still there nudgeAfter its deletion is annotated
// every nudgeEvery until it is gone.
const (
	nudgeAfter = 2 * time.Second
	nudgeEvery = 2 * time.Second
	// NudgeAnnotation is the annotation a nudge sets (the time, RFC 3339).
	NudgeAnnotation = "install.operator.istio.io/deletion-nudge"
)

// waitGone waits until every object in objs no longer exists, watching them through
// selector (which they match).
func (in *pass) waitGone(ctx context.Context, objs []*unstructured.Unstructured, selector string) error {
	nudged := map[string]time.Time{}
	var left *unstructured.Unstructured
	err := in.watch.Await(ctx, func() (bool, error) {
		left = nil
		for _, o := range objs {
			live, err := in.watch.Get(ctx, o, selector)
			if err != nil && (apierrors.IsNotFound(err) || meta.IsNoMatchError(err)) {
				// Its kind is no longer served: the purge removed its CRD, and with it the
				// object (the Istio CRs of an east-west gateway's install).
				continue
			}
			if err != nil {
				return false, err
			}
			if live == nil {
				continue
			}
			if left == nil {
				left = live
			}
			in.nudge(ctx, live, nudged)
		}
		return left == nil, nil
	})
	if err != nil && err == ctx.Err() && left != nil {
		return fmt.Errorf("%s is still being deleted (finalizers: %v): %w", ref.Of(left).String(), left.GetFinalizers(), err)
	}
	return err
}

// startWatchCaches starts the watch cache of every CRD among objs (kube.StartWatchCache
// says why), all at once, and returns a func that waits until each has been asked. Failing
// to start one only costs the shortcut: the finalizer retries and waitGone nudges it.
func (in *Run) startWatchCaches(ctx context.Context, objs []*unstructured.Unstructured, dryRun bool) (wait func()) {
	var wg sync.WaitGroup
	for _, o := range objs {
		if o.GetKind() != kube.CRDGVK.Kind || dryRun {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = in.Client.StartWatchCache(ctx, o)
		}()
	}
	return wg.Wait
}

// nudge annotates a CRD that has been terminating for nudgeAfter, at most every nudgeEvery
// (see nudgeAfter). A nudge that fails is only a missed shortcut: the finalizer retries
// anyway.
func (in *pass) nudge(ctx context.Context, live *unstructured.Unstructured, nudged map[string]time.Time) {
	ts := live.GetDeletionTimestamp()
	if live.GetKind() != kube.CRDGVK.Kind || ts == nil || time.Since(ts.Time) < nudgeAfter {
		return
	}
	key := live.GetName()
	if time.Since(nudged[key]) < nudgeEvery {
		return
	}
	nudged[key] = time.Now()
	_ = in.Client.Annotate(ctx, live, NudgeAnnotation, time.Now().UTC().Format(time.RFC3339Nano))
}

// Uninstall removes the targets and waits until they are gone, and returns a change
// (Removed) per object that went. The caller emits the run's done event; an uninstall its
// caller stopped returns an error that is a context.Canceled. It emits a pruned event per
// object removed to events.
func (r *Run) Uninstall(ctx context.Context, events event.Sink, targets []*unstructured.Unstructured, opts UninstallOptions) ([]Change, error) {
	in := r.newPass(events)
	in.watchBy(in.Client.NewMetadataWatcher())
	defer in.watch.Stop()
	selector := in.Owner.UninstallSelector(opts.Purge)
	rule, err := removable(selector)
	if err != nil {
		return nil, err
	}
	caller := ctx
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	// Batches of the same rank go at once, the CRDs too. Their watch caches were started
	// when the plan found them (Targets), so that the apiserver's finalizer of a CRD that
	// still has custom resources finds its cache ready; the deletion of those it has none
	// of is finished as soon as each CRD's delete returns (kube.Client.FinishCRDDeletion),
	// beside the rest.
	started := in.cachesStarted
	if started == nil {
		started = in.startWatchCaches(ctx, targets, opts.DryRun)
	}
	var finishing sync.WaitGroup
	defer func() {
		finishing.Wait()
		started()
	}()
	finish := func(o *unstructured.Unstructured) {
		if o.GetKind() == kube.CRDGVK.Kind && !opts.DryRun {
			finishing.Add(1)
			go func() {
				defer finishing.Done()
				_, _ = in.Client.FinishCRDDeletion(ctx, o)
			}()
		}
	}
	if !opts.DryRun {
		// The watches waitGone judges by start now, all at once: their initial lists run
		// beside the deletes rather than one after another once the last delete returned.
		// An error is waitGone's to report (or, for a kind no longer served, to pass).
		for _, t := range targets {
			_ = in.watch.Start(t.GroupVersionKind(), t.GetNamespace(), selector)
		}
	}
	var deleted []*unstructured.Unstructured
	var removed []Change
	for _, batch := range removalBatches(targets) {
		if caller.Err() != nil {
			return removed, uninstallStopped(len(removed), len(targets))
		}
		if istiodWrite(batch[0]) && !opts.DryRun {
			// What istiod wrote goes once it has stopped, with whatever it wrote since the
			// plan listed it.
			if batch, err = in.afterIstiod(ctx, deleted, batch, selector); err != nil {
				return removed, err
			}
		}
		went, changes, stopped, err := in.removeBatch(caller, batch, opts.DryRun, Removed, rule, finish)
		deleted = append(deleted, went...)
		removed = append(removed, changes...)
		if err != nil {
			return removed, err
		}
		if stopped {
			return removed, uninstallStopped(len(removed), len(targets))
		}
	}
	if !opts.DryRun {
		return removed, in.waitGone(ctx, deleted, selector)
	}
	return removed, nil
}

// uninstallStopped is the error of an uninstall its caller stopped.
func uninstallStopped(removed, targets int) error {
	return &StoppedError{Msg: fmt.Sprintf("interrupted: %d of %d objects removed; run the same uninstall again to finish it", removed, targets)}
}

// StoppedError is a removal its caller stopped at a safe point; it is a context.Canceled.
type StoppedError struct{ Msg string }

func (e *StoppedError) Error() string { return e.Msg }
func (e *StoppedError) Unwrap() error { return context.Canceled }

// maxListed is how many pods a warning names before it says how many more there are.
const maxListed = 30

// UninstallWarnings says, before anything is removed, what an uninstall of targets takes
// away from workloads (as upstream warns): the pods whose sidecars use the revision (every
// revision with Purge), which lose their control plane, and the gateways, whose traffic
// stops.
func (in *Installer) UninstallWarnings(ctx context.Context, targets []*unstructured.Unstructured, opts UninstallOptions) ([]event.Event, error) {
	var out []event.Event
	selector := ownership.LabelRevision + "=" + in.Owner.Rev()
	what := fmt.Sprintf("revision %q", in.Owner.Rev())
	if opts.Purge {
		selector, what = ownership.LabelRevision, "a revision"
	}
	var pods []unstructured.Unstructured
	var err error
	// Only when the control plane goes: a spec of gateways beside an existing istiod leaves
	// the sidecars theirs.
	if slices.ContainsFunc(targets, func(t *unstructured.Unstructured) bool {
		return t.GetKind() == "Deployment" && component.Name(t.GetLabels()[ownership.LabelComponent]) == component.Pilot
	}) {
		pods, err = in.Client.List(ctx, kube.PodGVK, selector)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		// Not a reason to refuse the uninstall (a user may remove what they may not list).
		out = append(out, event.Event{Type: event.Warning, Message: fmt.Sprintf("cannot tell which pods use %s: %v", what, err)})
	}
	var proxies []string
	for _, p := range pods {
		if p.GetAnnotations()["sidecar.istio.io/status"] != "" && p.GetDeletionTimestamp() == nil {
			proxies = append(proxies, p.GetNamespace()+"/"+p.GetName())
		}
	}
	if len(proxies) > 0 {
		sort.Strings(proxies)
		listed := proxies
		if len(listed) > maxListed {
			listed = append(listed[:maxListed:maxListed], fmt.Sprintf("and %d more", len(proxies)-maxListed))
		}
		pods := fmt.Sprintf("%d pods still have", len(proxies))
		if len(proxies) == 1 {
			pods = "1 pod still has"
		}
		out = append(out, event.Event{Type: event.Warning, Details: listed, Message: fmt.Sprintf(
			"%s sidecars of %s: they keep running but get no configuration or certificates until they are restarted with another revision's injection", pods, what)})
	}
	var gateways []string
	for _, t := range targets {
		c, known := component.Get(component.Name(t.GetLabels()[ownership.LabelComponent]))
		if known && c.Multi && t.GetKind() == c.WorkloadKind {
			gateways = append(gateways, ref.Of(t).String())
		}
	}
	if len(gateways) > 0 {
		out = append(out, event.Event{Type: event.Warning, Details: gateways,
			Message: "these gateways are removed, and the traffic they carry stops:"})
	}
	return out, nil
}
