package install

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/readiness"
)

// wait polls objs until all are ready, one fails, or ctx ends. A Waiting event goes out
// when an object's reason changes, so logs show progress without repeating themselves.
func (in *Installer) wait(ctx context.Context, objs []*unstructured.Unstructured, ev event.Event) error {
	pending := map[string]*unstructured.Unstructured{}
	last := map[string]readiness.Result{}
	announced := map[string]bool{}
	for _, o := range objs {
		pending[kube.Describe(o)] = o
	}
	tick := time.NewTicker(in.Opts.Poll)
	defer tick.Stop()
	for {
		for _, key := range sortedKeys(pending) {
			o := pending[key]
			live, err := in.Client.Get(ctx, o)
			if err != nil {
				if ctx.Err() != nil {
					break
				}
				return err
			}
			var r readiness.Result
			switch {
			case live == nil:
				r = readiness.Result{Status: readiness.InProgress, Message: "not found"}
			case live.GetKind() == "MutatingWebhookConfiguration" || live.GetKind() == "ValidatingWebhookConfiguration":
				r = in.webhookReady(ctx, live)
			default:
				r = readiness.Check(live)
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
		select {
		case <-ctx.Done():
			var details []string
			// A fresh context: the run's deadline has passed, but the reasons are worth one look.
			dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for _, key := range sortedKeys(pending) {
				details = append(details, fmt.Sprintf("%s (%s)", key, last[key].Message))
				if podKinds[pending[key].GetKind()] {
					for _, why := range in.podReasons(dctx, pending[key]) {
						details = append(details, "  "+why)
					}
				}
			}
			return &NotReadyError{Details: details, Err: ctx.Err()}
		case <-tick.C:
		}
	}
}

func sortedKeys(m map[string]*unstructured.Unstructured) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func listPods(ctx context.Context, ri dynamic.ResourceInterface, selector string) ([]*corev1.Pod, error) {
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for _, u := range list.Items {
		var p corev1.Pod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p); err == nil {
			out = append(out, &p)
		}
	}
	return out, nil
}

func podProblem(p *corev1.Pod) string { return readiness.PodProblem(p) }

var sliceGVK = schema.GroupVersionKind{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}

// webhookReady: a webhook configuration is ready when every Service it calls has a ready
// endpoint. Until then each API request it intercepts fails (failurePolicy Fail) or skips
// the webhook (Ignore), so the install is not done.
func (in *Installer) webhookReady(ctx context.Context, wh *unstructured.Unstructured) readiness.Result {
	hooks, _, _ := unstructured.NestedSlice(wh.Object, "webhooks")
	for _, h := range hooks {
		m, _ := h.(map[string]any)
		svc, ok, _ := unstructured.NestedMap(m, "clientConfig", "service")
		if !ok {
			continue // a URL: nothing in the cluster to wait for
		}
		ns, name := fmt.Sprint(svc["namespace"]), fmt.Sprint(svc["name"])
		ri, _, err := in.Client.Resource(sliceGVK, ns)
		if err != nil {
			return readiness.Result{Status: readiness.InProgress, Message: err.Error()}
		}
		list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + name})
		if err != nil {
			return readiness.Result{Status: readiness.InProgress, Message: err.Error()}
		}
		ready := false
		for _, s := range list.Items {
			eps, _, _ := unstructured.NestedSlice(s.Object, "endpoints")
			for _, ep := range eps {
				if r, ok, _ := unstructured.NestedBool(ep.(map[string]any), "conditions", "ready"); ok && r {
					ready = true
				}
			}
		}
		if !ready {
			return readiness.Result{Status: readiness.InProgress, Message: fmt.Sprintf("Service %s/%s has no ready endpoint yet", ns, name)}
		}
	}
	return readiness.Result{Status: readiness.Ready, Message: "its services have ready endpoints"}
}
