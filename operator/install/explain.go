package install

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/readiness"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// podKinds are workloads whose pods explain why they are not ready.
var podKinds = map[string]bool{"Deployment": true, "DaemonSet": true, "StatefulSet": true}

// maxWarnings is how many Warning events a report gives per object: the newest.
const maxWarnings = 3

// explainer finds why objects are not ready, for the report of a failed wait. It reads each
// namespace's Warning events once.
type explainer struct {
	in     *Installer
	events map[string][]corev1.Event // by namespace, newest first
}

// reasons returns why obj is not ready beyond its status (the readiness message): the
// problems of its pods (unschedulable, image pull back-off, crash loop; one line per
// distinct problem) and the newest Warning events about it, its pods and (for a
// Deployment) its ReplicaSets, which say what no status does (a quota or policy that
// refuses a DaemonSet's pods, a failed mount). One event per object and reason, none that
// repeats what the status or a pod line says.
func (x *explainer) reasons(ctx context.Context, obj *unstructured.Unstructured, status string) []string {
	// Named without a namespace: the events read are the object's namespace's.
	involved := map[ref.Ref]bool{ref.New(obj.GetKind(), "", obj.GetName()): true}
	var out []string
	if podKinds[obj.GetKind()] {
		selector := matchLabels(obj)
		if selector != "" {
			seen := map[string]bool{}
			for _, p := range x.list(ctx, kube.PodGVK, obj.GetNamespace(), selector) {
				involved[ref.New("Pod", "", p.GetName())] = true
				var pod corev1.Pod
				if runtime.DefaultUnstructuredConverter.FromUnstructured(p.Object, &pod) != nil {
					continue
				}
				if why := podProblem(&pod); why != "" && !seen[why] {
					seen[why] = true
					out = append(out, fmt.Sprintf("pod %s: %s", pod.Name, why))
				}
			}
			if obj.GetKind() == "Deployment" {
				for _, rs := range x.list(ctx, kube.ReplicaSetGVK, obj.GetNamespace(), selector) {
					involved[ref.New("ReplicaSet", "", rs.GetName())] = true
				}
			}
		}
	}
	shown := strings.Join(out, "\n")
	said := map[string]bool{}
	n := 0
	// Events about a cluster-scoped object are kept in the default namespace.
	eventsIn := obj.GetNamespace()
	if eventsIn == "" {
		eventsIn = metav1.NamespaceDefault
	}
	for _, e := range x.warnings(ctx, eventsIn) {
		on := ref.New(e.InvolvedObject.Kind, "", e.InvolvedObject.Name)
		msg := strings.TrimPrefix(strings.TrimSpace(e.Message), "(combined from similar events): ")
		// A Deployment's ReplicaFailure status carries its ReplicaSet's FailedCreate, and
		// the scheduler's FailedScheduling says what the pod's condition already said.
		if !involved[on] || said[on.String()+" "+e.Reason] || strings.HasPrefix(status, e.Reason+":") || strings.Contains(shown, msg) {
			continue
		}
		said[on.String()+" "+e.Reason] = true
		out = append(out, fmt.Sprintf("event %s on %s: %s", e.Reason, on, msg))
		if n++; n == maxWarnings {
			break
		}
	}
	return out
}

// list returns the objects of gvk in namespace that selector matches; nothing when they
// cannot be read (the report is best effort).
func (x *explainer) list(ctx context.Context, gvk schema.GroupVersionKind, namespace, selector string) []unstructured.Unstructured {
	ri, _, err := x.in.Client.Resource(gvk, namespace)
	if err != nil {
		return nil
	}
	l, err := ri.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil
	}
	return l.Items
}

// warnings returns namespace's Warning events, newest first.
func (x *explainer) warnings(ctx context.Context, namespace string) []corev1.Event {
	if evs, ok := x.events[namespace]; ok {
		return evs
	}
	var evs []corev1.Event
	if ri, _, err := x.in.Client.Resource(kube.EventGVK, namespace); err == nil {
		if l, err := ri.List(ctx, metav1.ListOptions{FieldSelector: "type=" + corev1.EventTypeWarning}); err == nil {
			for _, u := range l.Items {
				var e corev1.Event
				if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &e) == nil {
					evs = append(evs, e)
				}
			}
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return lastSeen(evs[i]).After(lastSeen(evs[j])) })
	if x.events == nil {
		x.events = map[string][]corev1.Event{}
	}
	x.events[namespace] = evs
	return evs
}

// lastSeen is when an event last happened (readiness.EventTime).
func lastSeen(e corev1.Event) time.Time { return readiness.EventTime(e) }

// matchLabels is a workload's spec.selector.matchLabels as a label selector ("" without one).
func matchLabels(obj *unstructured.Unstructured) string {
	sel, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "selector", "matchLabels")
	return labels.Set(sel).String()
}
