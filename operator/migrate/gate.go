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
// deadline naming the first workload not through and why.
func (r *Runner) gate(ctx context.Context, ws []Workload, rev string, deadline time.Time) error {
	poll := r.Poll
	if poll == 0 {
		poll = 500 * time.Millisecond
	}
	pending := append([]Workload(nil), ws...)
	for {
		var last verdict
		for len(pending) > 0 {
			v, err := r.gated(ctx, pending[0], rev)
			if err != nil {
				return &BatchError{Workload: pending[0], Cause: err}
			}
			if v.failed {
				return &BatchError{Workload: pending[0], Cause: errors.New(v.why)}
			}
			if !v.ok {
				last = v
				break
			}
			pending = pending[1:]
		}
		if len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return &BatchError{Workload: pending[0], Cause: fmt.Errorf("not ready on revision %s within the readiness timeout (%s): %s; fix it and run the same command again to resume, or add --rollback to return the migrated workloads",
				rev, r.Timeout, last.why)}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted while waiting for %s: %w; run the same command again to resume", pending[0], ctx.Err())
		case <-time.After(poll):
		}
	}
}

// gated judges one workload: its own readiness, then its pods'.
func (r *Runner) gated(ctx context.Context, w Workload, rev string) (verdict, error) {
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: w.Kind}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace(w.Namespace)
	obj.SetName(w.Name)
	live, err := r.Client.Get(ctx, obj)
	if err != nil {
		return verdict{}, err
	}
	if live == nil {
		return verdict{failed: true, why: "it no longer exists"}, nil
	}
	list := func(gvk schema.GroupVersionKind, ns, sel string) ([]*unstructured.Unstructured, error) {
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
	pods, err := r.Client.ListIn(ctx, kube.PodGVK, w.Namespace, labels.Set(sel).String())
	if err != nil {
		return verdict{}, err
	}
	for i := range pods {
		if pods[i].GetDeletionTimestamp() != nil {
			continue
		}
		if why := podOn(&pods[i], rev); why != "" {
			return verdict{why: why}, nil
		}
	}
	return verdict{ok: true}, nil
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
