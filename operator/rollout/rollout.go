package rollout

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/readiness"
)

// Annotation marks a DaemonSet applied with OnDelete for a node-by-node rollout: set by the
// OnDelete apply, gone with the apply as rendered that ends the rollout (the same field
// manager stops declaring it). The readiness rules (verify-install) name it, and a run that
// finds it continues the rollout.
const Annotation = ownership.AnnotationNodeRollout

// controllerRevisionGVK is the kind a DaemonSet's templates are kept in.
var controllerRevisionGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ControllerRevision"}

// hashLabel is the DaemonSet controller's label of a pod's (and a revision's) template hash.
const hashLabel = appsv1.DefaultDaemonSetUniqueLabelKey

// OnDelete is ds (as rendered) with updateStrategy OnDelete and the Annotation: what the
// rollout applies first, so the DaemonSet controller replaces no pod by itself.
func OnDelete(ds *unstructured.Unstructured) *unstructured.Unstructured {
	c := ds.DeepCopy()
	_ = unstructured.SetNestedMap(c.Object, map[string]any{"type": string(appsv1.OnDeleteDaemonSetStrategyType)}, "spec", "updateStrategy")
	ann := c.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[Annotation] = "in progress: updateStrategy OnDelete while istioctl replaces the pods node by node"
	c.SetAnnotations(ann)
	return c
}

// templateChanges says whether applying ds (as rendered) over live changes its pod
// template: a server-side dry run of the apply says (nothing is written).
func templateChanges(ctx context.Context, client *kube.Client, ds, live *unstructured.Unstructured) (bool, error) {
	dry, err := client.Apply(ctx, ds, kube.ApplyOptions{DryRun: true})
	if err != nil {
		return false, err
	}
	if dry.Skipped || dry.Live == nil {
		return false, nil
	}
	was, _, _ := unstructured.NestedMap(live.Object, "spec", "template")
	will, _, _ := unstructured.NestedMap(dry.Live.Object, "spec", "template")
	return !reflect.DeepEqual(was, will), nil
}

// Rollout replaces the pods of one DaemonSet node batch by node batch.
type Rollout struct {
	Client *kube.Client
	// Batch is how many nodes are replaced at once (0: 1).
	Batch int
	// Events receives a node-batch event per batch started, ready or failed, each with the
	// fields of Base (the component).
	Events event.Sink
	Base   event.Event
	// Timeout is the run's readiness timeout, for messages (the deadline is ctx's).
	Timeout time.Duration
}

// NodeError is a node whose new pod did not become ready: the rollout stopped there.
type NodeError struct {
	DaemonSet, Node string
	// Cause is what the readiness rules last said of the node's new pod.
	Cause string
	// Err is the context's error when the wait ended before the pod was ready (nil: the
	// cause is permanent).
	Err error
}

func (e *NodeError) Error() string {
	why := "cannot become ready"
	switch {
	case errors.Is(e.Err, context.DeadlineExceeded):
		why = "not ready before the readiness deadline"
	case e.Err != nil:
		why = "not ready when the run was stopped"
	}
	return fmt.Sprintf("%s stopped at node %s: its new pod is %s: %s. The nodes not reached keep their old pods; fix the cause, then run the same upgrade again: it continues from node %s",
		e.DaemonSet, e.Node, why, e.Cause, e.Node)
}

func (e *NodeError) Unwrap() error { return e.Err }

// Plan is the node batches, in order, a rollout of ds (as rendered) replaces the pods of,
// batch nodes at a time, read from the cluster (nothing is written); none when ds does not
// run yet, or when the apply changes no pod template and no earlier rollout is unfinished
// (Annotation): the DaemonSet is then applied as it is. When the template changes, every
// node with a pod; otherwise the nodes whose pod is old or not ready.
func Plan(ctx context.Context, client *kube.Client, ds *unstructured.Unstructured, batch int) ([][]string, error) {
	live, err := client.Get(ctx, ds)
	if err != nil || live == nil {
		return nil, err
	}
	changes, err := templateChanges(ctx, client, ds, live)
	if err != nil {
		return nil, err
	}
	if _, unfinished := live.GetAnnotations()[Annotation]; !changes && !unfinished {
		return nil, nil
	}
	st, err := read(ctx, client.ListIn, live)
	if err != nil {
		return nil, err
	}
	var nodes []string
	for _, n := range st.nodes() {
		if changes || st.old(n) || !st.ready(n) {
			nodes = append(nodes, n)
		}
	}
	return batches(nodes, batch), nil
}

func batches(nodes []string, size int) [][]string {
	if size <= 0 {
		size = 1
	}
	var out [][]string
	for len(nodes) > 0 {
		n := min(size, len(nodes))
		out = append(out, nodes[:n])
		nodes = nodes[n:]
	}
	return out
}

// state is a DaemonSet's pods by node and the hash of its newest template.
type state struct {
	hash   string
	byNode map[string][]corev1.Pod
}

func (s *state) nodes() []string {
	out := make([]string, 0, len(s.byNode))
	for n := range s.byNode {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// old says node runs a pod of an older template.
func (s *state) old(node string) bool {
	for _, p := range s.byNode[node] {
		if p.DeletionTimestamp == nil && p.Labels[hashLabel] != s.hash {
			return true
		}
	}
	return false
}

// current is node's pod on the newest template (nil: none yet).
func (s *state) current(node string) *corev1.Pod {
	for i, p := range s.byNode[node] {
		if p.DeletionTimestamp == nil && p.Labels[hashLabel] == s.hash {
			return &s.byNode[node][i]
		}
	}
	return nil
}

func (s *state) ready(node string) bool {
	p := s.current(node)
	if p == nil {
		return false
	}
	r, _ := readiness.CheckWith(toUnstructured(p), nil)
	return r.Status == readiness.Ready
}

type lister func(ctx context.Context, gvk schema.GroupVersionKind, namespace, selector string) ([]unstructured.Unstructured, error)

// read lists ds's pods (by its selector, owned by it) and its newest ControllerRevision.
func read(ctx context.Context, list lister, ds *unstructured.Unstructured) (*state, error) {
	sel, _, _ := unstructured.NestedStringMap(ds.Object, "spec", "selector", "matchLabels")
	selector := labels.Set(sel).String()
	revs, err := list(ctx, controllerRevisionGVK, ds.GetNamespace(), selector)
	if err != nil {
		return nil, err
	}
	st := &state{byNode: map[string][]corev1.Pod{}}
	newest := int64(-1)
	for _, r := range revs {
		if !ownedBy(&r, ds) {
			continue
		}
		n, _, _ := unstructured.NestedInt64(r.Object, "revision")
		if n > newest {
			newest, st.hash = n, r.GetLabels()[hashLabel]
		}
	}
	pods, err := list(ctx, kube.PodGVK, ds.GetNamespace(), selector)
	if err != nil {
		return nil, err
	}
	for _, u := range pods {
		if !ownedBy(&u, ds) {
			continue
		}
		var p corev1.Pod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p); err != nil {
			return nil, fmt.Errorf("reading pod %s: %w", u.GetName(), err)
		}
		if n := nodeOf(&p); n != "" {
			st.byNode[n] = append(st.byNode[n], p)
		}
	}
	return st, nil
}

func ownedBy(o *unstructured.Unstructured, ds *unstructured.Unstructured) bool {
	for _, r := range o.GetOwnerReferences() {
		if r.UID == ds.GetUID() {
			return true
		}
	}
	return false
}

// nodeOf is the node a DaemonSet pod is for: where it is bound, or, not scheduled yet, the
// node its controller pinned it to (a matchFields term on metadata.name).
func nodeOf(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == "metadata.name" && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

func toUnstructured(p *corev1.Pod) *unstructured.Unstructured {
	m, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(kube.PodGVK)
	return u
}

// Run rolls ds (as applied with OnDelete) out: the nodes whose pod is not on its newest
// template, Batch at a time in the order of their names, after the nodes whose new pod an
// earlier run left not ready. It returns a *NodeError at the first node whose new pod does
// not become ready, and ctx's error when stopped between batches (no pod of a batch not
// started is touched).
func (r *Rollout) Run(ctx context.Context, ds *unstructured.Unstructured) error {
	w := r.Client.NewWatcher()
	if r.Events != nil {
		w.OnStall(func(s kube.Stall) { r.Events.Emit(event.Stalled(r.Base, s.Watch(), s.LastHeard, s.Missed, s.Advice())) })
	}
	defer w.Stop()
	key := ref.Of(ds).String()
	list := func(ctx context.Context, gvk schema.GroupVersionKind, ns, sel string) ([]unstructured.Unstructured, error) {
		items, err := w.List(ctx, gvk, ns, sel)
		out := make([]unstructured.Unstructured, len(items))
		for i, it := range items {
			out[i] = *it
		}
		return out, err
	}
	live, err := r.observed(ctx, w, ds)
	if err != nil {
		return err
	}
	st, err := read(ctx, list, live)
	if err != nil {
		return err
	}
	var todo []string
	for _, n := range st.nodes() { // an earlier run's new pods not ready yet come first
		if !st.old(n) && !st.ready(n) {
			todo = append(todo, n)
		}
	}
	for _, n := range st.nodes() {
		if st.old(n) {
			todo = append(todo, n)
		}
	}
	all := batches(todo, r.Batch)
	for i, nodes := range all {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.emit(event.NodeBatchStarted, key, nodes, i, len(all), "", "")
		st, err := read(ctx, list, live)
		if err != nil {
			return err
		}
		for _, n := range nodes {
			for _, p := range st.byNode[n] {
				if p.DeletionTimestamp == nil && p.Labels[hashLabel] != st.hash {
					if err := r.Client.Delete(ctx, toUnstructured(&p), false); err != nil {
						return err
					}
				}
			}
		}
		if err := r.waitBatch(ctx, w, list, live, nodes); err != nil {
			var ne *NodeError
			if errors.As(err, &ne) {
				r.emit(event.NodeBatchFailed, key, nodes, i, len(all), "", err.Error())
			}
			return err
		}
		r.emit(event.NodeBatchReady, key, nodes, i, len(all), "", "")
	}
	return nil
}

func (r *Rollout) emit(t event.Type, object string, nodes []string, i, n int, msg, errMsg string) {
	if r.Events == nil {
		return
	}
	e := r.Base
	e.Type, e.Object, e.Nodes, e.Error = t, object, nodes, errMsg
	e.Batch, e.Batches = i+1, n
	e.Message = msg
	r.Events.Emit(e)
}

// observed waits until the DaemonSet controller has seen the applied generation of ds (its
// newest ControllerRevision is then the applied template) and returns the live object.
func (r *Rollout) observed(ctx context.Context, w *kube.Watcher, ds *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var seen *unstructured.Unstructured
	err := w.Await(ctx, func() (bool, error) {
		live, err := w.Get(ctx, ds, "")
		if err != nil || live == nil {
			return false, err
		}
		gen := live.GetGeneration()
		obs, _, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration")
		if obs >= gen && gen >= ds.GetGeneration() {
			seen = live
			return true, nil
		}
		return false, nil
	})
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("%s: %w while waiting for its controller to see the new template", ref.Of(ds).String(), ctx.Err())
	}
	return seen, err
}

// waitBatch waits until every node of nodes runs a Ready pod of the newest template. The
// pod's verdict is the readiness rules' (a Failed pod fails at once), and so is the
// DaemonSet's for pods admission refuses for good (its FailedCreate events).
func (r *Rollout) waitBatch(ctx context.Context, w *kube.Watcher, list lister, ds *unstructured.Unstructured, nodes []string) error {
	last := map[string]string{}
	events := func(gvk schema.GroupVersionKind, ns, sel string) ([]*unstructured.Unstructured, error) {
		return w.List(ctx, gvk, ns, sel)
	}
	var pending []string
	err := w.Await(ctx, func() (bool, error) {
		st, err := read(ctx, list, ds)
		if err != nil {
			return false, err
		}
		pending = nil
		for _, n := range nodes {
			p := st.current(n)
			if p == nil {
				pending = append(pending, n)
				if _, ok := last[n]; !ok || strings.HasPrefix(last[n], "old pod") {
					last[n] = "no pod of the new template yet"
				}
				if st.old(n) {
					last[n] = "old pod still terminating"
				}
				continue
			}
			res, err := readiness.CheckWith(toUnstructured(p), nil)
			if err != nil {
				return false, err
			}
			switch res.Status {
			case readiness.Ready:
				continue
			case readiness.Failed:
				return false, &NodeError{DaemonSet: ref.Of(ds).String(), Node: n, Cause: "pod " + p.Name + ": " + res.Message}
			}
			last[n] = "pod " + p.Name + ": " + res.Message
			pending = append(pending, n)
		}
		if len(pending) == 0 {
			return true, nil
		}
		if live, err := w.Get(ctx, ds, ""); err == nil && live != nil {
			if res, err := readiness.CheckWith(live, events); err == nil && res.Status == readiness.Failed && res.Refusal != nil {
				return false, &NodeError{DaemonSet: ref.Of(ds).String(), Node: pending[0], Cause: res.Message}
			}
		}
		return false, nil
	})
	if err != nil && err == ctx.Err() && len(pending) > 0 {
		n := pending[0]
		return &NodeError{DaemonSet: ref.Of(ds).String(), Node: n, Cause: last[n] + timeoutNote(r.Timeout, ctx), Err: ctx.Err()}
	}
	return err
}

func timeoutNote(t time.Duration, ctx context.Context) string {
	if t > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return " (--readiness-timeout " + t.String() + ")"
	}
	return ""
}
