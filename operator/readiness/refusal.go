package readiness

import (
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/istioctl-installer/istioctl/operator/kube"
)

// Layer is the admission layer that refused a pod (or any object).
type Layer string

// The admission layers a refusal is told apart by.
const (
	PodSecurity    Layer = "Pod Security"
	Quota          Layer = "ResourceQuota"
	LimitRange     Layer = "LimitRange"
	Policy         Layer = "ValidatingAdmissionPolicy"
	Webhook        Layer = "admission webhook"
	Validation     Layer = "validation"
	ServiceAccount Layer = "ServiceAccount admission"
	Namespace      Layer = "namespace lifecycle"
	Authorization  Layer = "authorization"
	Unknown        Layer = "admission"
)

// Refusal is the apiserver's refusal of a create, read from an error, a workload's
// ReplicaFailure condition or a FailedCreate event.
type Refusal struct {
	Layer   Layer
	Message string
	// Permanent says waiting cannot fix it: the same request is refused until someone
	// changes the cluster or the spec.
	Permanent bool
	// CannotCheck says a dry run could not ask the question at all (a webhook with side
	// effects, a webhook that cannot be called): neither admitted nor refused.
	CannotCheck bool
}

// refusalRule is one cause: how its message reads, and whether waiting can fix it.
type refusalRule struct {
	layer Layer
	// any of these in the message.
	marks []string
	// permanent: waiting cannot fix it. A quota refusal is permanent only without old
	// pods (see Classify).
	permanent, cannotCheck bool
}

// refusalRules are the causes, most specific first; the first whose mark the message holds
// wins. The one place that says which refusals are permanent.
var refusalRules = []refusalRule{
	// Asked of a webhook that may have side effects, a dry run is refused whatever the
	// object: that says nothing about the object.
	{layer: Webhook, marks: []string{"does not support dry run"}, cannotCheck: true},
	// The webhook could not be called (its service has no endpoint yet, a timeout): it may
	// answer later.
	{layer: Webhook, marks: []string{"failed calling webhook"}, cannotCheck: true},
	{layer: Webhook, marks: []string{"denied the request"}, permanent: true},
	// RBAC: the user may not send the request, dry run or not; the permissions check
	// says what they lack.
	{layer: Authorization, marks: []string{"cannot create resource", "cannot patch resource"}, cannotCheck: true},
	{layer: PodSecurity, marks: []string{"violates PodSecurity"}, permanent: true},
	{layer: Policy, marks: []string{"ValidatingAdmissionPolicy"}, permanent: true},
	// The quota controller has not counted the usage of a new quota yet: it will.
	{layer: Quota, marks: []string{"status unknown for quota"}},
	{layer: Quota, marks: []string{"failed quota:"}, permanent: true}, // must specify requests or limits
	{layer: Quota, marks: []string{"exceeded quota", "insufficient quota"}, permanent: true},
	{layer: LimitRange, marks: []string{"usage per Container is", "usage per Pod is", "limit to request ratio per"}, permanent: true},
	// A pod the spec makes invalid, often once a LimitRange's default limit is set below
	// the pod's request.
	{layer: Validation, marks: []string{" is invalid:"}, permanent: true},
	// The install creates the ServiceAccount: it exists a moment later.
	{layer: ServiceAccount, marks: []string{"error looking up service account"}},
	{layer: Namespace, marks: []string{"because it is being terminated", "namespaces \""}},
}

// Classify reads a refusal's message. oldPods says the workload still has pods of an
// earlier version: a quota exceeded then is not permanent, since their removal by the
// rolling update frees what they hold; without them nothing of the install frees quota,
// so the refusal is permanent. A message no rule knows is not permanent: the readiness
// timeout decides.
func Classify(message string, oldPods bool) Refusal {
	for _, r := range refusalRules {
		for _, m := range r.marks {
			if !strings.Contains(message, m) {
				continue
			}
			out := Refusal{Layer: r.layer, Message: message, Permanent: r.permanent, CannotCheck: r.cannotCheck}
			if oldPods && m == "exceeded quota" {
				out.Permanent = false
			}
			return out
		}
	}
	return Refusal{Layer: Unknown, Message: message}
}

// refused is the verdict on a workload whose pods admission refuses: failed when the
// refusal is permanent, in progress otherwise.
func refused(reason string, r Refusal) Result {
	if r.Permanent {
		res := failed("pods refused by %s: %s", r.Layer, r.Message)
		res.Refusal = &r
		return res
	}
	return progress("%s: %s", reason, r.Message)
}

// failedCreate is the newest FailedCreate event of the workload obj (matched by UID, so
// an earlier object of the same name does not count), without its "Error creating: "
// prefix; "" when there is none. A DaemonSet's or StatefulSet's refused pods show
// nowhere else: their controllers set no condition.
func failedCreate(obj *unstructured.Unstructured, list Lister) string {
	if list == nil {
		return ""
	}
	evs, err := list(kube.EventGVK, obj.GetNamespace(), "")
	if err != nil {
		return ""
	}
	var mine []corev1.Event
	for _, u := range evs {
		var e corev1.Event
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &e) != nil {
			continue
		}
		io := e.InvolvedObject
		if e.Reason == "FailedCreate" && io.Kind == obj.GetKind() && io.Name == obj.GetName() && io.UID == obj.GetUID() {
			mine = append(mine, e)
		}
	}
	if len(mine) == 0 {
		return ""
	}
	sort.SliceStable(mine, func(i, j int) bool { return EventTime(mine[i]).After(EventTime(mine[j])) })
	msg := strings.TrimPrefix(strings.TrimSpace(mine[0].Message), "(combined from similar events): ")
	msg = strings.TrimPrefix(msg, "Error creating: ")
	// The StatefulSet controller's words: "create Pod x in StatefulSet y failed error: ...".
	if i := strings.Index(msg, " failed error: "); i >= 0 && strings.HasPrefix(msg, "create Pod ") {
		msg = msg[i+len(" failed error: "):]
	}
	return msg
}

// EventTime is when an event last happened, whichever API wrote it.
func EventTime(e corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// withEvents is a workload rule that, when its own verdict is not ready, also reads the
// workload's FailedCreate events: a permanent refusal among them fails it.
func withEvents[T any](f func(*T) Result, oldPods func(*T) bool) func(*unstructured.Unstructured, Lister) (Result, error) {
	return func(obj *unstructured.Unstructured, list Lister) (Result, error) {
		var v T
		if err := convert(withoutTemplate(obj), &v); err != nil {
			return failed("%v", err), nil
		}
		r := f(&v)
		if r.Status != InProgress {
			return r, nil
		}
		if msg := failedCreate(obj, list); msg != "" {
			if ref := Classify(msg, oldPods(&v)); ref.Permanent {
				return refused("FailedCreate", ref), nil
			}
		}
		return r, nil
	}
}
