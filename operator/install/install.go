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
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/objdiff"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/schedule"
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
	// Upgrade says the run upgrades components that run: they go in the order of the skew
	// rule upgrade-order (component.UpgradeAfter), and DaemonSets whose pods change roll
	// node batch by node batch (rollout), NodeBatch nodes at a time (default 1).
	Upgrade   bool
	NodeBatch int
}

// Installer says how to apply rendered manifests and remove what an install owns: the
// cluster, the install's owner, the options. It holds no state of a run: Start makes one.
type Installer struct {
	Client *kube.Client
	Owner  ownership.Owner
	Opts   Options
	// NamespaceMeta is what the install sets on its namespaces, by name.
	NamespaceMeta map[string]NamespaceMeta
}

// Run is one install or removal by an Installer, from its plan to its end: what the plan
// read of the cluster (one metadata list per kind and namespace, which the apply reuses
// instead of a read per object) and the watch caches a purge's plan started. Made per plan
// (Installer.Start); its methods are safe for concurrent use.
type Run struct {
	*Installer
	// metas holds, per kind and namespace, what existed before the run touched it.
	metasMu sync.Mutex
	metas   map[metaKey]*metaList
	// cachesStarted, when Targets started the CRDs' watch caches, waits until each has
	// been asked (startWatchCaches).
	cachesStarted func()
}

// Start begins a run of the installer: its plan's reads, then its Install or Uninstall.
func (in *Installer) Start() *Run { return &Run{Installer: in} }

// pass is one Install or Uninstall call of a run: where its events go, the watch its waits
// read, and, in a dry run, the namespaces that do not exist (the server cannot dry-run
// objects inside them).
type pass struct {
	*Run
	events    event.Sink
	watch     *kube.Watcher
	missingNS map[string]bool
	// services are the Services the run renders, by the component rendering each.
	services map[string]string
}

// newPass begins a call of r, its events stamped as they go to events (nil: dropped).
func (r *Run) newPass(events event.Sink) *pass {
	if events == nil {
		events = event.Discard{}
	}
	return &pass{Run: r, events: event.Stamped(events)}
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
func (in *Run) before(ctx context.Context, o *unstructured.Unstructured) (*metav1.PartialObjectMetadata, error) {
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

// Result is what a run did: a change per object it applied, found unchanged, pruned or did
// not get to (Skipped), in the order the events said so; the counts derive from it.
type Result struct {
	Changes []Change
	// Failed names the components that failed or were skipped.
	Failed []string
}

// Applied counts the objects created, configured or deactivated (in a dry run: that would
// be).
func (r *Result) Applied() int { return Count(r.Changes, Created, Configured, Deactivated) }

// Unchanged counts the objects already as rendered.
func (r *Result) Unchanged() int { return Count(r.Changes, Unchanged) }

// Pruned counts the objects pruned.
func (r *Result) Pruned() int { return Count(r.Changes, Pruned) }

// NotApplied counts the objects a stopped run did not get to.
func (r *Result) NotApplied() int { return Count(r.Changes, Skipped) }

// InterruptedError is a run its caller stopped (Ctrl-C): it stopped at a safe point.
type InterruptedError struct {
	Applied, NotApplied int
	// Unfinished names the components that did not become ready.
	Unfinished []string
	// Pruning says it stopped in the prune, after Pruned of Stale objects went: the next
	// run finds the rest stale still and prunes them.
	Pruning       bool
	Pruned, Stale int
	// Command is what to run again to finish ("install" when unset; a rollback's run says
	// "rollback").
	Command string
}

func (e *InterruptedError) Error() string {
	again := e.Command
	if again == "" {
		again = "install"
	}
	if e.Pruning {
		return fmt.Sprintf("interrupted while pruning: %d objects applied, %d of %d stale objects pruned. Run the same %s again to finish it (it prunes the rest)",
			e.Applied, e.Pruned, e.Stale, again)
	}
	msg := fmt.Sprintf("interrupted: %d objects applied, %d not applied", e.Applied, e.NotApplied)
	if len(e.Unfinished) > 0 {
		msg += "; not finished: " + strings.Join(e.Unfinished, ", ")
	}
	return msg + ". Nothing was pruned, and no webhook configuration went out before the workloads serving it were ready. Run the same " + again + " again to finish it"
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
// starts once all its parents are ready (runGraph); a failed component skips its
// dependents. Each component ends its hook in hooks (nil: hooks of the run's own) once its
// instances are done: what a run beside this one waits on. The caller emits the run's plan
// and done events: Install emits what happens in between, to events.
func (r *Run) Install(ctx context.Context, events event.Sink, hooks *schedule.Hooks, manifests []render.Manifest, stale []*unstructured.Unstructured) (*Result, error) {
	if hooks == nil {
		hooks = schedule.New()
	}
	in := r.newPass(events)
	in.watchBy(in.Client.NewWatcher())
	defer in.watch.Stop()
	in.services = renderedServices(manifests)
	caller := ctx
	if in.Opts.Timeout > 0 && !in.Opts.DryRun {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, in.Opts.Timeout)
		defer cancel()
	}
	res := &Result{}
	if err := in.ensureNamespaces(ctx, manifests); err != nil {
		return res, err
	}
	var mu sync.Mutex
	var errs []error
	record := func(key string, changes []Change, err error) {
		mu.Lock()
		defer mu.Unlock()
		res.Changes = append(res.Changes, changes...)
		if err != nil {
			res.Failed = append(res.Failed, key)
			errs = append(errs, err)
		}
	}
	runGraph(ctx, hooks, manifests, in.Opts.Upgrade, func(m render.Manifest) error {
		ev := componentEvent(m.Instance)
		e := ev
		e.Type, e.Total = event.ComponentStarted, len(m.Objects)
		in.events.Emit(e)
		changes, err := in.installComponent(ctx, m, ev)
		e = ev
		if err != nil {
			err = fmt.Errorf("%s: %w", m.Instance.Title, err)
			e.Type, e.Error = event.ComponentFailed, errors.Unwrap(err).Error()
			var nr *NotReadyError
			if errors.As(err, &nr) {
				e.Details = nr.Details
			}
		} else {
			e.Type = event.ComponentReady
		}
		record(m.Instance.Key(), changes, err)
		in.events.Emit(e)
		return err
	}, func(m render.Manifest, why string, outer error) {
		e := componentEvent(m.Instance)
		e.Type, e.Message = event.ComponentSkipped, "not applied: "+why
		in.events.Emit(e)
		var err error
		if outer != nil { // no component of this run failed: the skip is the run's failure
			err = fmt.Errorf("%s: not applied: %w", m.Instance.Title, outer)
		}
		record(m.Instance.Key(), skipped(m.Instance.Key(), m.Objects), err)
		if err == nil {
			mu.Lock()
			res.Failed = append(res.Failed, m.Instance.Key())
			mu.Unlock()
		}
	})
	if caller.Err() != nil {
		err := &InterruptedError{Applied: res.Applied() + res.Unchanged(), NotApplied: res.NotApplied(), Unfinished: res.Failed}
		sort.Strings(err.Unfinished)
		return res, err
	}
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	pruned, err := in.prune(ctx, manifests, stale)
	res.Changes = append(res.Changes, pruned...)
	if err != nil && caller.Err() != nil {
		// Stopped between deletes (those sent finished) or while waiting for them to go.
		return res, &InterruptedError{Applied: res.Applied() + res.Unchanged(), Pruning: true, Pruned: res.Pruned(), Stale: len(stale)}
	}
	return res, err
}

// componentEvent is the fields every event about a component instance carries.
func componentEvent(inst component.Instance) event.Event {
	title := inst.Title
	if inst.InstanceName != "" && inst.InstanceName != inst.WorkloadName {
		title += " (" + inst.InstanceName + ")"
	}
	return event.Event{Component: inst.Key(), Title: title, Icon: inst.Icon}
}

// skipped are the changes of objects a run did not get to.
func skipped(key string, objs []*unstructured.Unstructured) []Change {
	out := make([]Change, len(objs))
	for i, o := range objs {
		out[i] = Change{Object: ref.Of(o).String(), Component: key, Action: Skipped}
	}
	return out
}

// installComponent applies one instance stage by stage, each stage ready before the next:
// its webhook configurations go out only once the workloads serving them are ready, so an
// install stopped half-way never leaves a webhook calling a control plane that is not up.
// The changes include the objects it did not get to (Skipped).
func (in *pass) installComponent(ctx context.Context, m render.Manifest, ev event.Event) ([]Change, error) {
	labels := in.Owner.Labels(m.Instance.Name)
	key := m.Instance.Key()
	sts := stages(m.Objects)
	var changes []Change
	rest := func(from int) []Change {
		var out []Change
		for _, later := range sts[from:] {
			out = append(out, skipped(key, later.Objects)...)
		}
		return out
	}
	for i, st := range sts {
		if ctx.Err() != nil {
			return append(changes, rest(i)...), fmt.Errorf("%s before %s were applied", stopped(ctx), st.Name)
		}
		objs := make([]*unstructured.Unstructured, len(st.Objects))
		for i, o := range st.Objects {
			objs[i] = withLabels(o, labels)
		}
		if err := in.waitControlPlane(ctx, istioCRs(objs), ev); err != nil {
			return append(changes, rest(i)...), err
		}
		objs, rolls, err := in.nodeByNode(ctx, objs)
		if err != nil {
			return append(changes, rest(i)...), err
		}
		live, applied, err := in.applyAll(ctx, objs, ev)
		changes = append(changes, applied...)
		if err == nil && Count(applied, Skipped) > 0 {
			err = fmt.Errorf("%s while applying %s", stopped(ctx), st.Name)
		}
		if err == nil && !in.Opts.DryRun {
			err = in.wait(ctx, toWaitFor(without(objs, rolls), key, in.services), live, ev)
		}
		if err == nil {
			err = in.roll(ctx, rolls, ev)
		}
		if err != nil {
			return append(changes, rest(i+1)...), err
		}
	}
	return changes, nil
}

// concurrency is Options.Concurrency, 8 when unset: how many applies or deletes run at once.
func (in *Installer) concurrency() int {
	if in.Opts.Concurrency <= 0 {
		return 8
	}
	return in.Opts.Concurrency
}

// applyAll applies objects concurrently, bounded by Options.Concurrency, and returns a
// change per object (Skipped for those it did not start) and the objects as the apply calls
// returned them (absent for those left alone). When ctx ends it starts no new apply but
// lets those in flight finish (each bounded by the client's request timeout), so it never
// stops not knowing whether a write happened.
func (in *pass) applyAll(ctx context.Context, objs []*unstructured.Unstructured, ev event.Event) (map[string]*unstructured.Unstructured, []Change, error) {
	live := map[string]*unstructured.Unstructured{}
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
	changes := make([]*Change, len(objs))
	for i, o := range objs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			for j := i; j < len(objs); j++ {
				changes[j] = &Change{Object: ref.Of(objs[j]).String(), Component: ev.Component, Action: Skipped}
			}
			break
		}
		wg.Add(1)
		go func(i int, o *unstructured.Unstructured) {
			defer wg.Done()
			defer func() { <-sem }()
			c, l, err := in.applyOne(actx, o, ev.Component)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			changes[i] = c
			if l != nil {
				live[ref.Of(o).String()] = l
			}
		}(i, o)
	}
	wg.Wait()
	var out []Change
	for _, c := range changes {
		if c == nil {
			continue // failed: the error says so
		}
		out = append(out, *c)
		if c.Action == Skipped {
			continue
		}
		in.events.Emit(c.Event(ev))
		if len(c.TakenOver) > 0 {
			w := ev
			w.Type, w.Object = event.Warning, c.Object
			w.Message = "took over fields another field manager had set (as upstream, " + ownership.FieldManager + " wins)"
			w.Details = c.TakenOver
			in.events.Emit(w)
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return live, out, errors.Join(errs...)
}

// applyOne applies one object and says what changed; live is what the apply returned.
func (in *pass) applyOne(ctx context.Context, o *unstructured.Unstructured, component string) (c *Change, live *unstructured.Unstructured, err error) {
	c = &Change{Object: ref.Of(o).String(), Component: component, DryRun: in.Opts.DryRun}
	if in.missingNS[o.GetNamespace()] {
		c.Action, c.Note = Created, "its namespace does not exist yet, so the server could not check it"
		return c, nil, nil
	}
	opts := kube.ApplyOptions{DryRun: in.Opts.DryRun}
	if !in.Opts.DryRun {
		before, err := in.before(ctx, o)
		// Without the list (not allowed to list?), Apply reads the object itself.
		opts.Before, opts.Known = before, err == nil
	}
	r, err := in.Client.Apply(ctx, o, opts)
	if err != nil {
		return nil, nil, err
	}
	if in.Opts.DryRun && !r.Created && r.Before != nil {
		// What the server says the object would become, against what it is.
		diff, err := objdiff.Diff(r.Before, r.Live, kube.ServerAnnotations...)
		if err != nil {
			return nil, nil, fmt.Errorf("comparing %s: %w", ref.Of(o).String(), err)
		}
		r.Changed = diff != ""
		if r.Changed {
			c.Diff = strings.Split(strings.TrimRight(diff, "\n"), "\n")
		}
	}
	switch {
	case r.Created:
		c.Action = Created
	case r.Changed:
		c.Action = Configured
	default:
		c.Action = Unchanged
	}
	c.TakenOver = r.TakenOver
	return c, r.Live, nil
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
