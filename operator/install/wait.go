package install

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/readiness"
)

// wait blocks until all of objs are ready, one fails, or ctx ends, judging them from watches
// (no polling): it re-judges whenever a watched object changes. applied holds what the
// apply calls returned, for the kinds not watched. A Waiting event goes out when an object's
// reason changes, so logs show progress without repeating themselves, and again every
// stillWaitingEvery for the first object still not ready, so a long wait is never silent.
func (in *pass) wait(ctx context.Context, objs []*unstructured.Unstructured, applied map[string]*unstructured.Unstructured, ev event.Event) error {
	pending := map[string]*unstructured.Unstructured{}
	last := map[string]readiness.Result{}
	announced := map[string]bool{}
	for _, o := range objs {
		pending[ref.Of(o).String()] = o
	}
	// The verdict of each watched object's last look, by resourceVersion: every wait of the
	// run wakes at any watched change, and judging converts the whole object, so re-judging
	// unchanged objects made an install with many gateways quadratic in their number.
	judged := map[string]verdict{}
	nextStill := time.Now().Add(stillWaitingEvery)
	// kube.Watcher.Await looks again at every change, and after PingEvery with none (so an
	// object still not ready after the first look is announced a second later).
	err := in.watch.Await(ctx, func() (bool, error) {
		for _, key := range sortedKeys(pending) {
			o := pending[key]
			r, err := in.judge(ctx, o, applied[key], judged, key)
			if err != nil {
				if ctx.Err() != nil {
					return false, nil // Await returns ctx's error
				}
				if deadlineNear(err) {
					// The client refused a request it could not finish before the deadline:
					// the wait timed out, whatever the request was.
					<-ctx.Done()
					return false, nil
				}
				return false, err
			}
			switch r.Status {
			case readiness.Ready:
				delete(pending, key)
				if announced[key] {
					e := ev
					e.Type, e.Object, e.Message = event.Ready, key, r.Message
					in.events.Emit(e)
				}
			case readiness.Failed:
				return false, fmt.Errorf("%s failed: %s", key, r.Message)
			default:
				// Not on the first look: most objects are ready a moment after they are
				// applied, and a line each would drown the ones that are not.
				if prev, ok := last[key]; ok && (prev.Message != r.Message || !announced[key]) {
					announced[key] = true
					e := ev
					e.Type, e.Object, e.Message = event.Waiting, key, r.Message
					in.events.Emit(e)
				}
			}
			last[key] = r
		}
		if len(pending) == 0 {
			return true, nil
		}
		if time.Now().After(nextStill) {
			in.stillWaiting(sortedKeys(pending), announced, last, ev)
			nextStill = time.Now().Add(stillWaitingEvery)
		}
		return false, nil
	})
	if err == nil || err != ctx.Err() {
		return err
	}
	var details []string
	// A fresh context: the run's deadline has passed, but the reasons are worth one look.
	dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	x := &explainer{in: in.Installer}
	for _, key := range sortedKeys(pending) {
		details = append(details, fmt.Sprintf("%s (%s)", key, last[key].Message))
		for _, why := range x.reasons(dctx, pending[key], last[key].Message) {
			details = append(details, "  "+why)
		}
	}
	return &NotReadyError{Details: details, Err: ctx.Err(), Timeout: in.Opts.Timeout}
}

// watchBy makes w the pass's watcher; each watch it finds stalled is a watch-stalled event.
func (in *pass) watchBy(w *kube.Watcher) {
	in.watch = w
	w.OnStall(func(s kube.Stall) {
		in.events.Emit(event.Stalled(event.Event{}, s.Watch(), s.LastHeard, s.Missed, s.Advice()))
	})
}

// stillWaitingEvery is how often a wait says again what it still waits for.
const stillWaitingEvery = 5 * time.Second

// stillWaiting says again why the first announced object of keys (sorted) is not ready.
func (in *pass) stillWaiting(keys []string, announced map[string]bool, last map[string]readiness.Result, ev event.Event) {
	for _, key := range keys {
		if announced[key] {
			e := ev
			e.Type, e.Object, e.Message = event.Waiting, key, last[key].Message
			in.events.Emit(e)
			return
		}
	}
}

// verdict is a watched object's verdict at a resourceVersion.
type verdict struct {
	rv string
	r  readiness.Result
}

// source is where a wait reads an object's verdict from.
type source int

const (
	// fromWatch: the kind's verdict reads status; its watch holds the live object.
	fromWatch source = iota
	// fromRelated: the verdict reads related objects (a webhook's EndpointSlices), watched.
	fromRelated
	// fromApply: the verdict reads what the apply returned (a Service's cluster IP).
	fromApply
)

// sourceOf is how a wait judges a kind, from its readiness rule alone.
func sourceOf(kind string) source {
	rule, ok := readiness.RuleFor(kind)
	switch {
	case ok && rule.Watch:
		return fromWatch
	case ok && len(rule.Related) > 0:
		return fromRelated
	}
	return fromApply
}

// judge gives the verdict on one applied object by its readiness rule: a watched kind from
// its watch (a watched object seen at the same resourceVersion as last time, in judged
// under key, keeps its verdict without a look), a kind whose rule reads related objects
// from their watches, any other from what its apply returned.
func (in *pass) judge(ctx context.Context, o, applied *unstructured.Unstructured, judged map[string]verdict, key string) (readiness.Result, error) {
	list := func(gvk schema.GroupVersionKind, namespace, selector string) ([]*unstructured.Unstructured, error) {
		return in.watch.List(ctx, gvk, namespace, selector)
	}
	switch sourceOf(o.GroupVersionKind().GroupKind().String()) {
	case fromWatch:
		live, err := in.watch.Get(ctx, o, in.Owner.WatchSelector())
		if err != nil || live == nil {
			return readiness.Result{Status: readiness.InProgress, Message: "not found"}, err
		}
		if applied != nil && live.GetGeneration() < applied.GetGeneration() {
			// The watch has not delivered our apply yet: the cached object is the one before
			// it, and may look ready for a spec that is no longer wanted.
			return readiness.Result{Status: readiness.InProgress, Message: "waiting for the watch to see the applied generation"}, nil
		}
		rv := live.GetResourceVersion()
		rule, _ := readiness.RuleFor(o.GroupVersionKind().GroupKind().String())
		if v, ok := judged[key]; ok && rv != "" && v.rv == rv && !rule.Events {
			// A verdict that reads events changes without the object: never kept.
			return v.r, nil
		}
		r, err := readiness.CheckWith(live, list)
		if err == nil && r.Refusal != nil {
			r, err = in.confirmRefusal(ctx, live, r)
		}
		if err == nil {
			judged[key] = verdict{rv, r}
		}
		return r, err
	case fromRelated:
		// As rendered: what it calls does not change in the apply.
		return readiness.CheckWith(o, list)
	}
	if applied != nil {
		return readiness.CheckWith(applied, list)
	}
	// Skipped as unchanged: it exists as we applied it.
	return readiness.Result{Status: readiness.Ready, Message: "exists"}, nil
}

func sortedKeys(m map[string]*unstructured.Unstructured) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func podProblem(p *corev1.Pod) string { return readiness.PodProblem(p) }

// deadlineNear says an error is the context's deadline, come or about to: client-go's rate
// limiter refuses a request it could not send before the deadline with its own error
// ("client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context
// deadline"), which wraps no context error.
func deadlineNear(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "would exceed context deadline")
}
