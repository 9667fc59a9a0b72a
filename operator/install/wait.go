package install

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/readiness"
)

// watchedKinds are the kinds whose readiness shows in their status, so a wait watches them.
// Every other kind is ready once applied (a Service gets its cluster IP in the create call).
var watchedKinds = map[string]bool{
	"CustomResourceDefinition.apiextensions.k8s.io": true,
	"Namespace":             true,
	"Deployment.apps":       true,
	"DaemonSet.apps":        true,
	"StatefulSet.apps":      true,
	"Job.batch":             true,
	"PersistentVolumeClaim": true,
}

// wait blocks until all of objs are ready, one fails, or ctx ends, judging them from watches
// (no polling): it re-judges whenever a watched object changes. applied holds what the
// apply calls returned, for the kinds not watched. A Waiting event goes out when an object's
// reason changes, so logs show progress without repeating themselves.
func (in *Installer) wait(ctx context.Context, objs []*unstructured.Unstructured, applied map[string]*unstructured.Unstructured, ev event.Event) error {
	pending := map[string]*unstructured.Unstructured{}
	last := map[string]readiness.Result{}
	announced := map[string]bool{}
	for _, o := range objs {
		pending[kube.Describe(o)] = o
	}
	// The verdict of each watched object's last look, by resourceVersion: every wait of the
	// run wakes at any watched change, and judging converts the whole object, so re-judging
	// unchanged objects made an install with many gateways quadratic in their number.
	judged := map[string]verdict{}
	for first := true; ; first = false {
		changed := in.watch.Changed()
		for _, key := range sortedKeys(pending) {
			o := pending[key]
			r, err := in.judge(ctx, o, applied[key], judged, key)
			if err != nil {
				if ctx.Err() != nil {
					break
				}
				return err
			}
			switch r.Status {
			case readiness.Ready:
				delete(pending, key)
				if announced[key] {
					e := ev
					e.Type, e.Object, e.Message = event.Ready, key, r.Message
					in.Events.Emit(e)
				}
			case readiness.Failed:
				return fmt.Errorf("%s failed: %s", key, r.Message)
			default:
				// Not on the first look: most objects are ready a moment after they are
				// applied, and a line each would drown the ones that are not.
				if prev, ok := last[key]; ok && (prev.Message != r.Message || !announced[key]) {
					announced[key] = true
					e := ev
					e.Type, e.Object, e.Message = event.Waiting, key, r.Message
					in.Events.Emit(e)
				}
			}
			last[key] = r
		}
		if len(pending) == 0 {
			return nil
		}
		var settle <-chan time.Time
		if first {
			// One more look shortly after the first, so an object still not ready is
			// announced even when nothing about it changes for a while.
			settle = time.After(time.Second)
		}
		ping := time.NewTimer(kube.PingEvery)
		select {
		case <-ping.C:
			// Nothing changed for a while: make sure the cluster still answers.
			if err := in.watch.Ping(ctx); err != nil && ctx.Err() == nil {
				return err
			}
		case <-ctx.Done():
			var details []string
			// A fresh context: the run's deadline has passed, but the reasons are worth one look.
			dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			x := &explainer{in: in}
			for _, key := range sortedKeys(pending) {
				details = append(details, fmt.Sprintf("%s (%s)", key, last[key].Message))
				for _, why := range x.reasons(dctx, pending[key], last[key].Message) {
					details = append(details, "  "+why)
				}
			}
			return &NotReadyError{Details: details, Err: ctx.Err(), Timeout: in.Opts.Timeout}
		case <-changed:
		case <-settle:
		}
		ping.Stop()
	}
}

// verdict is a watched object's verdict at a resourceVersion.
type verdict struct {
	rv string
	r  readiness.Result
}

// judge gives the verdict on one applied object; a watched object seen at the same
// resourceVersion as last time (in judged, under key) keeps its verdict without a look.
func (in *Installer) judge(ctx context.Context, o, applied *unstructured.Unstructured, judged map[string]verdict, key string) (readiness.Result, error) {
	switch kind := o.GroupVersionKind().GroupKind().String(); {
	case kind == "MutatingWebhookConfiguration.admissionregistration.k8s.io" || kind == "ValidatingWebhookConfiguration.admissionregistration.k8s.io":
		return in.webhookReady(ctx, o)
	case watchedKinds[kind]:
		live, err := in.watch.Get(ctx, o, in.Owner.watchSelector())
		if err != nil || live == nil {
			return readiness.Result{Status: readiness.InProgress, Message: "not found"}, err
		}
		if applied != nil && live.GetGeneration() < applied.GetGeneration() {
			// The watch has not delivered our apply yet: the cached object is the one before
			// it, and may look ready for a spec that is no longer wanted.
			return readiness.Result{Status: readiness.InProgress, Message: "waiting for the watch to see the applied generation"}, nil
		}
		rv := live.GetResourceVersion()
		if v, ok := judged[key]; ok && rv != "" && v.rv == rv {
			return v.r, nil
		}
		r := readiness.Check(live)
		judged[key] = verdict{rv, r}
		return r, nil
	case applied != nil:
		return readiness.Check(applied), nil
	}
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

var sliceGVK = schema.GroupVersionKind{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}

// webhookReady: a webhook configuration is ready when every Service it calls has a ready
// endpoint. Until then each API request it intercepts fails (failurePolicy Fail) or skips
// the webhook (Ignore), so the install is not done.
func (in *Installer) webhookReady(ctx context.Context, wh *unstructured.Unstructured) (readiness.Result, error) {
	hooks, _, _ := unstructured.NestedSlice(wh.Object, "webhooks")
	for _, h := range hooks {
		m, _ := h.(map[string]any)
		svc, ok, _ := unstructured.NestedMap(m, "clientConfig", "service")
		if !ok {
			continue // a URL: nothing in the cluster to wait for
		}
		ns, name := fmt.Sprint(svc["namespace"]), fmt.Sprint(svc["name"])
		slices, err := in.watch.List(ctx, sliceGVK, ns, discoveryv1.LabelServiceName)
		if err != nil {
			return readiness.Result{}, err
		}
		ready := false
		for _, s := range slices {
			if s.GetLabels()[discoveryv1.LabelServiceName] != name {
				continue
			}
			eps, _, _ := unstructured.NestedSlice(s.Object, "endpoints")
			for _, ep := range eps {
				if r, ok, _ := unstructured.NestedBool(ep.(map[string]any), "conditions", "ready"); ok && r {
					ready = true
				}
			}
		}
		if !ready {
			return readiness.Result{Status: readiness.InProgress, Message: fmt.Sprintf("Service %s/%s has no ready endpoint yet", ns, name)}, nil
		}
	}
	return readiness.Result{Status: readiness.Ready, Message: "its services have ready endpoints"}, nil
}
