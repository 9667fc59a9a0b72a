package install

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/objdiff"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
)

// Options tune a run.
type Options struct {
	// DryRun applies with server-side dry run: admission and validation run, nothing is
	// written, nothing is waited for or pruned.
	DryRun bool
	// Timeout bounds the whole run's readiness wait (one deadline, not one per component).
	Timeout time.Duration
	// Concurrency bounds the objects applied at once within a stage (default 8).
	Concurrency int
}

// Installer applies rendered manifests.
type Installer struct {
	Client *kube.Client
	Owner  ownership.Owner
	Events event.Sink
	Opts   Options

	// missingNS holds, in a dry run, the namespaces that do not exist: the server cannot
	// dry-run objects inside them.
	missingNS map[string]bool
	// watch feeds the readiness waits.
	watch *kube.Watcher
	// metas holds, per kind and namespace, what existed before the run touched it.
	metasMu sync.Mutex
	metas   map[metaKey]*metaList
}

type metaKey struct {
	gvk schema.GroupVersionKind
	ns  string
}

type metaList struct {
	once  sync.Once
	items map[string]*metav1.PartialObjectMetadata
	err   error
}

// before says what existed of o's kind in o's namespace before this run: one metadata list
// per kind and namespace replaces a read per object.
func (in *Installer) before(ctx context.Context, o *unstructured.Unstructured) (*metav1.PartialObjectMetadata, error) {
	k := metaKey{o.GroupVersionKind(), o.GetNamespace()}
	in.metasMu.Lock()
	if in.metas == nil {
		in.metas = map[metaKey]*metaList{}
	}
	l, ok := in.metas[k]
	if !ok {
		l = &metaList{}
		in.metas[k] = l
	}
	in.metasMu.Unlock()
	l.once.Do(func() { l.items, l.err = in.Client.ListMeta(ctx, k.gvk, k.ns) })
	if l.err != nil {
		return nil, l.err
	}
	return l.items[o.GetName()], nil
}

// Result sums up a run.
type Result struct {
	Applied, Unchanged, Pruned int
	// NotApplied counts the objects an interrupted run did not get to.
	NotApplied int
	Failed     []string
}

// InterruptedError is a run its caller stopped (Ctrl-C): it stopped at a safe point.
type InterruptedError struct {
	Applied, NotApplied int
	// Unfinished names the components that did not become ready.
	Unfinished []string
}

func (e *InterruptedError) Error() string {
	msg := fmt.Sprintf("interrupted: %d objects applied, %d not applied", e.Applied, e.NotApplied)
	if len(e.Unfinished) > 0 {
		msg += "; not finished: " + strings.Join(e.Unfinished, ", ")
	}
	return msg + ". Nothing was pruned, and no webhook configuration went out before the workloads serving it were ready. Run the same install again to finish it"
}

func (e *InterruptedError) Unwrap() error { return context.Canceled }

// applyGrace is how long applies in flight may go on after the run is stopped.
const applyGrace = 10 * time.Second

// stopped says why ctx ended, for messages.
func stopped(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "the readiness deadline passed"
	}
	return "interrupted"
}

// Install applies every manifest in dependency order, waits for readiness and prunes stale
// (what the plan found this install owns and no longer renders: see Stale). A component
// starts once all its parents are ready; a failed component skips its dependents. The
// caller emits the run's plan and done events: Install emits what happens in between.
func (in *Installer) Install(ctx context.Context, manifests []render.Manifest, stale []*unstructured.Unstructured) (*Result, error) {
	in.watch = in.Client.NewWatcher()
	defer in.watch.Stop()
	if in.Events == nil {
		in.Events = event.Discard{}
	}
	in.Events = event.Stamped(in.Events)
	caller := ctx
	if in.Opts.Timeout > 0 && !in.Opts.DryRun {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, in.Opts.Timeout)
		defer cancel()
	}
	res := &Result{}
	var mu sync.Mutex

	if err := in.ensureNamespaces(ctx, manifests); err != nil {
		return res, err
	}

	// done[c] closes when every instance of component c is finished; failed[c] says one failed.
	done := map[component.Name]chan struct{}{}
	failed := map[component.Name]bool{}
	present := map[component.Name]int{}
	for _, m := range manifests {
		present[m.Instance.Name]++
	}
	for _, c := range component.All {
		done[c.Name] = make(chan struct{})
	}
	remaining := map[component.Name]int{}
	for k, v := range present {
		remaining[k] = v
	}
	for _, c := range component.All {
		if present[c.Name] == 0 {
			close(done[c.Name]) // disabled components release their dependents at once
		}
	}
	finish := func(c component.Name, ok bool) {
		mu.Lock()
		defer mu.Unlock()
		if !ok {
			failed[c] = true
		}
		remaining[c]--
		if remaining[c] == 0 {
			close(done[c])
		}
	}

	var wg sync.WaitGroup
	var errs []error
	for _, m := range manifests {
		wg.Add(1)
		go func(m render.Manifest) {
			defer wg.Done()
			inst := m.Instance
			title := inst.Title
			if inst.InstanceName != "" && inst.InstanceName != inst.WorkloadName {
				title += " (" + inst.InstanceName + ")"
			}
			ev := event.Event{Component: inst.Key(), Title: title, Icon: inst.Icon}
			skip := func(why string) {
				e := ev
				e.Type, e.Message = event.ComponentSkipped, "not applied: "+why
				in.Events.Emit(e)
				mu.Lock()
				res.Failed = append(res.Failed, inst.Key())
				mu.Unlock()
				finish(inst.Name, false)
			}
			for _, p := range inst.Parents {
				select {
				case <-done[p]:
				case <-ctx.Done():
					skip(fmt.Sprintf("%s while waiting for %s", stopped(ctx), p))
					return
				}
				mu.Lock()
				parentFailed := failed[p]
				mu.Unlock()
				if parentFailed {
					skip(fmt.Sprintf("%s failed", p))
					return
				}
			}
			e := ev
			e.Type, e.Total = event.ComponentStarted, len(m.Objects)
			in.Events.Emit(e)
			applied, unchanged, notApplied, err := in.installComponent(ctx, m, ev)
			mu.Lock()
			res.Applied += applied
			res.Unchanged += unchanged
			res.NotApplied += notApplied
			if err != nil {
				res.Failed = append(res.Failed, inst.Key())
				errs = append(errs, fmt.Errorf("%s: %w", inst.Title, err))
			}
			mu.Unlock()
			e = ev
			if err != nil {
				e.Type, e.Error = event.ComponentFailed, err.Error()
				var nr *NotReadyError
				if errors.As(err, &nr) {
					e.Details = nr.Details
				}
			} else {
				e.Type = event.ComponentReady
			}
			in.Events.Emit(e)
			finish(inst.Name, err == nil)
		}(m)
	}
	wg.Wait()
	if caller.Err() != nil {
		err := &InterruptedError{Applied: res.Applied + res.Unchanged, NotApplied: res.NotApplied, Unfinished: res.Failed}
		sort.Strings(err.Unfinished)
		return res, err
	}
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	pruned, err := in.prune(ctx, stale)
	res.Pruned = pruned
	return res, err
}

// ensureNamespaces creates the namespaces the components install into, if missing.
func (in *Installer) ensureNamespaces(ctx context.Context, manifests []render.Manifest) error {
	seen := map[string]bool{}
	var names []string
	for _, m := range manifests {
		for _, ns := range append([]string{m.Instance.Namespace}, namespacesOf(m.Objects)...) {
			if ns != "" && !seen[ns] {
				seen[ns] = true
				names = append(names, ns)
			}
		}
	}
	sort.Strings(names)
	for _, ns := range names {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("v1")
		obj.SetKind("Namespace")
		obj.SetName(ns)
		live, err := in.Client.Get(ctx, obj)
		if err != nil {
			return err
		}
		if live != nil && live.GetDeletionTimestamp() != nil && !in.Opts.DryRun {
			// Nothing can be created in a namespace being deleted (an uninstall or a test's
			// cleanup a moment ago): wait until it is gone, then create it again.
			in.Events.Emit(event.Event{Type: event.Waiting, Object: kube.Describe(obj), Message: "being deleted; waiting until it is gone to create it again"})
			if live, err = in.waitNamespaceGone(ctx, obj); err != nil {
				return err
			}
		}
		if live != nil {
			continue
		}
		if _, err := in.Client.Apply(ctx, obj, kube.ApplyOptions{DryRun: in.Opts.DryRun}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
		status := "created"
		if in.Opts.DryRun {
			status = "would be created"
			if in.missingNS == nil {
				in.missingNS = map[string]bool{}
			}
			in.missingNS[ns] = true
		}
		in.Events.Emit(event.Event{Type: event.Applied, Object: kube.Describe(obj), Status: status})
	}
	return nil
}

// waitNamespaceGone re-reads a terminating namespace until it is gone (nil) or the run ends.
// A plain re-read: a rare case, and the namespace controller takes seconds anyway.
func (in *Installer) waitNamespaceGone(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("namespace %s is still being deleted: %w", obj.GetName(), ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
		live, err := in.Client.Get(ctx, obj)
		if err != nil || live == nil || live.GetDeletionTimestamp() == nil {
			return live, err
		}
	}
}

func namespacesOf(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		if o.GetNamespace() != "" {
			out = append(out, o.GetNamespace())
		}
	}
	return out
}

// installComponent applies one instance stage by stage, each stage ready before the next:
// its webhook configurations go out only once the workloads serving them are ready, so an
// install stopped half-way never leaves a webhook calling a control plane that is not up.
func (in *Installer) installComponent(ctx context.Context, m render.Manifest, ev event.Event) (applied, unchanged, notApplied int, err error) {
	labels := in.Owner.Labels(m.Instance.Name)
	sts := stages(m.Objects)
	for i, st := range sts {
		if ctx.Err() != nil {
			for _, later := range sts[i:] {
				notApplied += len(later.Objects)
			}
			return applied, unchanged, notApplied, fmt.Errorf("%s before %s were applied", stopped(ctx), st.Name)
		}
		objs := make([]*unstructured.Unstructured, len(st.Objects))
		for i, o := range st.Objects {
			objs[i] = withLabels(o, labels)
		}
		live, a, u, skipped, err := in.applyAll(ctx, objs, ev)
		applied += a
		unchanged += u
		notApplied += skipped
		if err == nil && skipped > 0 {
			err = fmt.Errorf("%s while applying %s", stopped(ctx), st.Name)
		}
		if err != nil {
			for _, later := range sts[i+1:] {
				notApplied += len(later.Objects)
			}
			return applied, unchanged, notApplied, err
		}
		if !in.Opts.DryRun {
			if err := in.wait(ctx, objs, live, ev); err != nil {
				for _, later := range sts[i+1:] {
					notApplied += len(later.Objects)
				}
				return applied, unchanged, notApplied, err
			}
		}
	}
	return applied, unchanged, notApplied, nil
}

// concurrency is Options.Concurrency, 8 when unset: how many applies or deletes run at once.
func (in *Installer) concurrency() int {
	if in.Opts.Concurrency <= 0 {
		return 8
	}
	return in.Opts.Concurrency
}

// applyAll applies objects concurrently, bounded by Options.Concurrency.
// It returns the objects as the apply calls returned them (absent for those left alone).
// When ctx ends it starts no new apply but lets those in flight finish (each bounded by the
// client's request timeout), so it never stops not knowing whether a write happened.
func (in *Installer) applyAll(ctx context.Context, objs []*unstructured.Unstructured, ev event.Event) (live map[string]*unstructured.Unstructured, applied, unchanged, skipped int, err error) {
	live = map[string]*unstructured.Unstructured{}
	sem := make(chan struct{}, in.concurrency())
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	// Applies in flight when ctx ends get a grace period to finish.
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	defer context.AfterFunc(ctx, func() { time.AfterFunc(applyGrace, cancel) })()
	// Events wait for the stage and go out in the objects' order: concurrent applies
	// finish in any order, and logs should read the same run after run.
	out := make([][]event.Event, len(objs))
	for i, o := range objs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			skipped = len(objs) - i
			break
		}
		wg.Add(1)
		go func(i int, o *unstructured.Unstructured) {
			defer wg.Done()
			defer func() { <-sem }()
			if in.missingNS[o.GetNamespace()] {
				mu.Lock()
				defer mu.Unlock()
				e := ev
				e.Type, e.Object, e.Status = event.Applied, kube.Describe(o), "would be created (its namespace does not exist yet, so the server could not check it)"
				out[i] = append(out[i], e)
				applied++
				return
			}
			opts := kube.ApplyOptions{DryRun: in.Opts.DryRun}
			if !in.Opts.DryRun {
				before, err := in.before(actx, o)
				// Without the list (not allowed to list?), Apply reads the object itself.
				opts.Before, opts.Known = before, err == nil
			}
			r, err := in.Client.Apply(actx, o, opts)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			if r.Live != nil {
				live[kube.Describe(o)] = r.Live
			}
			e := ev
			e.Type, e.Object = event.Applied, kube.Describe(o)
			var diff string
			if in.Opts.DryRun && !r.Created && r.Before != nil {
				// What the server says the object would become, against what it is.
				if diff, err = objdiff.Diff(r.Before, r.Live, kube.ServerAnnotations...); err != nil {
					errs = append(errs, fmt.Errorf("comparing %s: %w", kube.Describe(o), err))
					return
				}
				r.Changed = diff != ""
			}
			switch {
			case r.Created && in.Opts.DryRun:
				e.Status = "would be created"
				applied++
			case r.Changed && in.Opts.DryRun:
				e.Status = "would be configured"
				e.Details = strings.Split(strings.TrimRight(diff, "\n"), "\n")
				applied++
			case r.Created:
				e.Status = "created"
				applied++
			case r.Changed:
				e.Status = "configured"
				applied++
			default:
				e.Status = "unchanged"
				unchanged++
			}
			out[i] = append(out[i], e)
			if len(r.TakenOver) > 0 {
				w := ev
				w.Type, w.Object = event.Warning, kube.Describe(o)
				w.Message = "took over fields another field manager had set (as upstream, " + ownership.FieldManager + " wins)"
				w.Details = r.TakenOver
				out[i] = append(out[i], w)
			}
		}(i, o)
	}
	wg.Wait()
	for _, es := range out {
		for _, e := range es {
			in.Events.Emit(e)
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return live, applied, unchanged, skipped, errors.Join(errs...)
}

// NotReadyError lists what was not ready when the wait ended: the readiness timeout passed
// (Err is context.DeadlineExceeded) or the run was stopped.
type NotReadyError struct {
	Details []string
	Err     error
	// Timeout is the run's readiness timeout, for the message.
	Timeout time.Duration
}

func (e *NotReadyError) Error() string {
	why := "not ready when the run was stopped"
	if errors.Is(e.Err, context.DeadlineExceeded) {
		why = "not ready before the readiness deadline"
		if e.Timeout > 0 {
			why = fmt.Sprintf("not ready within the readiness timeout (%v)", e.Timeout)
		}
	}
	return why + ":\n  " + strings.Join(e.Details, "\n  ")
}

func (e *NotReadyError) Unwrap() error { return e.Err }
