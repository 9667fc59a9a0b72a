package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/readiness"
)

// annotationStatus is the injector's record on a pod: its revision among the rest.
const annotationStatus = "sidecar.istio.io/status"

// verdict is the gate's word on one workload.
type verdict struct {
	ok bool
	// failed says the readiness rules call the workload failed for good.
	failed bool
	why    string
}

// gate waits until every workload of ws is Ready by operator/readiness's rules and each of
// its pods is Ready and injected by rev; it stops at a workload failed for good, or at the
// deadline naming the first workload not through and why. It judges from the batch's
// watches (no polling): it looks again whenever a watched object changes, so a batch is
// through the moment its last pod is, and asks the apiserver whether it still answers when
// nothing changes for a while.
func (r *Runner) gate(ctx context.Context, w *kube.Watcher, ws []Workload, rev string, restarted map[Workload]int64, deadline time.Time) error {
	pending := append([]Workload(nil), ws...)
	var last verdict
	look := func() (bool, error) {
		for len(pending) > 0 {
			v, err := r.gated(ctx, w, pending[0], rev, restarted[pending[0]])
			if err != nil {
				return false, &BatchError{Workload: pending[0], Cause: err}
			}
			if v.failed {
				return false, &BatchError{Workload: pending[0], Cause: errors.New(v.why)}
			}
			if !v.ok {
				last = v
				return false, nil
			}
			pending = pending[1:]
		}
		return true, nil
	}
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	err := w.Await(dctx, look)
	var batchErr *BatchError
	switch {
	case err == nil || errors.As(err, &batchErr):
		return err
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted while waiting for %s: %w; run the same command again to resume", pending[0], ctx.Err())
	case dctx.Err() != nil:
		// The deadline: one last look, then the first workload not through and why.
		if done, err := look(); done || err != nil {
			return err
		}
		return &BatchError{Workload: pending[0], Cause: fmt.Errorf("not ready on revision %s within the readiness timeout (%s): %s; fix it and run the same command again to resume, or add --rollback to return the migrated workloads",
			rev, r.Timeout, last.why)}
	}
	// The apiserver no longer answers.
	return &BatchError{Workload: pending[0], Cause: err}
}

// watchBatch starts the watches a batch's gate judges from: its workloads' kinds and the
// pods of each of its namespaces, all at once, so their first lists overlap the restarts.
func watchBatch(w *kube.Watcher, ws []Workload) error {
	for _, wl := range ws {
		if err := w.Start(workloadGVK(wl), wl.Namespace, ""); err != nil {
			return err
		}
		if err := w.Start(kube.PodGVK, wl.Namespace, ""); err != nil {
			return err
		}
	}
	return nil
}

func workloadGVK(w Workload) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: w.Kind}
}

// object is w's reference as an object to read.
func (w Workload) object() *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(workloadGVK(w))
	obj.SetNamespace(w.Namespace)
	obj.SetName(w.Name)
	return obj
}

// gated judges one workload from the watches: its own readiness, then its pods'. gen is the
// generation its restart wrote (0: not restarted by this run): a cached object older than
// that is the one from before the restart.
func (r *Runner) gated(ctx context.Context, w *kube.Watcher, wl Workload, rev string, gen int64) (verdict, error) {
	live, err := w.Get(ctx, wl.object(), "")
	if err != nil {
		return verdict{}, err
	}
	if live == nil {
		return verdict{failed: true, why: "it no longer exists"}, nil
	}
	if live.GetGeneration() < gen {
		return verdict{why: "waiting for the watch to see the restart"}, nil
	}
	list := func(gvk schema.GroupVersionKind, ns, sel string) ([]*unstructured.Unstructured, error) {
		if gvk == kube.PodGVK {
			return podsOf(ctx, w, ns, sel)
		}
		items, err := r.Client.ListIn(ctx, gvk, ns, sel)
		out := make([]*unstructured.Unstructured, len(items))
		for i := range items {
			out[i] = &items[i]
		}
		return out, err
	}
	res, err := readiness.CheckWith(live, list)
	if err != nil {
		return verdict{}, err
	}
	switch res.Status {
	case readiness.Failed:
		return verdict{failed: true, why: res.Message}, nil
	case readiness.InProgress:
		why := res.Message
		if pods := readiness.PodsWhy(live, list); len(pods) > 0 {
			why += "; " + strings.Join(pods, "; ")
		}
		return verdict{why: why}, nil
	}
	sel, _, _ := unstructured.NestedStringMap(live.Object, "spec", "selector", "matchLabels")
	pods, err := podsOf(ctx, w, wl.Namespace, labels.Set(sel).String())
	if err != nil {
		return verdict{}, err
	}
	for _, p := range pods {
		if p.GetDeletionTimestamp() != nil {
			continue
		}
		if why := podOn(p, rev); why != "" {
			return verdict{why: why}, nil
		}
	}
	return verdict{ok: true}, nil
}

// podsOf filters the watch of ns's pods by selector: one watch per namespace serves every
// workload in it.
func podsOf(ctx context.Context, w *kube.Watcher, ns, selector string) ([]*unstructured.Unstructured, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, err
	}
	all, err := w.List(ctx, kube.PodGVK, ns, "")
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, p := range all {
		if sel.Matches(labels.Set(p.GetLabels())) {
			out = append(out, p)
		}
	}
	return out, nil
}

// podOn says why a pod is not Ready on revision rev ("" when it is).
func podOn(u *unstructured.Unstructured, rev string) string {
	var p corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p); err != nil {
		return err.Error()
	}
	var st struct {
		Revision string `json:"revision"`
	}
	raw := p.Annotations[annotationStatus]
	if raw == "" {
		return fmt.Sprintf("pod %s is not injected", p.Name)
	}
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return fmt.Sprintf("pod %s: %s unreadable: %v", p.Name, annotationStatus, err)
	}
	if got := ownership.Rev(st.Revision); got != ownership.Rev(rev) {
		return fmt.Sprintf("pod %s is injected by revision %s", p.Name, got)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return ""
		}
	}
	return fmt.Sprintf("pod %s is not Ready", p.Name)
}
