package readiness

import (
	"fmt"
	"sort"

	"github.com/istioctl-installer/istioctl/operator/kube"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Lister gives a rule the related objects it reads: those of kind gvk in namespace
// matching the label selector. Install's wait answers from its watches, verify-install
// from live lists.
type Lister func(gvk schema.GroupVersionKind, namespace, selector string) ([]*unstructured.Unstructured, error)

// Rule is how objects of one kind are judged.
type Rule struct {
	// Kind is the group kind, as schema.GroupKind.String() writes it ("Deployment.apps").
	Kind string
	// Watch says the verdict reads what controllers write after the apply (status): a wait
	// watches the kind, since the apply's response would be stale. A rule without Watch
	// reads only what the apply's response already holds (a Service's cluster IP) or the
	// related objects.
	Watch bool
	// Related are the kinds the verdict also reads (a webhook's EndpointSlices); the
	// waiter watches them.
	Related []schema.GroupVersionKind
	// Events says the verdict also reads the object's FailedCreate events, when given a
	// Lister (a wait watches the namespace's events): its controller says a refusal of
	// its pods nowhere else. The verdict then changes without the object changing.
	Events bool
	// Check judges an object that is not being deleted; list answers for Related.
	Check func(obj *unstructured.Unstructured, list Lister) (Result, error)
}

// rules is every kind with a verdict of its own.
var rules = map[string]Rule{}

func init() {
	for _, r := range []Rule{
		{Kind: "CustomResourceDefinition.apiextensions.k8s.io", Watch: true, Check: pure(crd)},
		{Kind: "Namespace", Watch: true, Check: pure(namespace)},
		{Kind: "Deployment.apps", Watch: true, Check: typed(func(d *appsv1.Deployment) Result { return deployment(d) })},
		{Kind: "DaemonSet.apps", Watch: true, Events: true, Check: withEvents(daemonSet, func(d *appsv1.DaemonSet) bool {
			return d.Status.CurrentNumberScheduled > d.Status.UpdatedNumberScheduled
		})},
		{Kind: "StatefulSet.apps", Watch: true, Events: true, Check: withEvents(statefulSet, func(s *appsv1.StatefulSet) bool {
			return s.Status.CurrentRevision != s.Status.UpdateRevision && s.Status.CurrentReplicas > 0
		})},
		{Kind: "Job.batch", Watch: true, Check: typed(func(j *batchv1.Job) Result { return job(j) })},
		{Kind: "PersistentVolumeClaim", Watch: true, Check: pure(pvc)},
		{Kind: "Pod", Watch: true, Check: func(obj *unstructured.Unstructured, _ Lister) (Result, error) {
			var p corev1.Pod
			if err := convert(obj, &p); err != nil {
				return failed("%v", err), nil
			}
			return pod(&p), nil
		}},
		{Kind: "Service", Check: pure(service)},
		{Kind: "MutatingWebhookConfiguration.admissionregistration.k8s.io", Related: []schema.GroupVersionKind{kube.EndpointSliceGVK}, Check: webhook},
		{Kind: "ValidatingWebhookConfiguration.admissionregistration.k8s.io", Related: []schema.GroupVersionKind{kube.EndpointSliceGVK}, Check: webhook},
	} {
		rules[r.Kind] = r
	}
}

// ExistsIsEnough are the kinds that are ready once they exist, each with why. Most have no
// status to judge; a kind here for another reason says so.
var ExistsIsEnough = map[string]string{
	"ConfigMap":                             "no status",
	"Secret":                                "no status",
	"ServiceAccount":                        "no status",
	"ResourceQuota":                         "its status counts usage; nothing to wait for",
	"LimitRange":                            "no status",
	"Role.rbac.authorization.k8s.io":        "no status",
	"RoleBinding.rbac.authorization.k8s.io": "no status",
	"ClusterRole.rbac.authorization.k8s.io": "no status",
	"ClusterRoleBinding.rbac.authorization.k8s.io":                  "no status",
	"NetworkPolicy.networking.k8s.io":                               "no status to wait for",
	"EndpointSlice.discovery.k8s.io":                                "no status",
	"ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io": "no status",
	"NetworkAttachmentDefinition.k8s.cni.cncf.io":                   "no status",
	"Gateway.networking.istio.io":                                   "Istio config: istiod reads it, and its status is istiod's analysis, not readiness",
	"VirtualService.networking.istio.io":                            "Istio config: istiod reads it, and its status is istiod's analysis, not readiness",
	// Kinds with a status that says nothing about the install being done.
	"ValidatingAdmissionPolicy.admissionregistration.k8s.io": "its status holds type-checking warnings about the policy's expressions, not readiness",
	"PodDisruptionBudget.policy":                             "its status counts the healthy pods of the workload it guards, which that workload's own verdict covers",
	"HorizontalPodAutoscaler.autoscaling":                    "its conditions need a metrics server (the test bed has none, and an install must not wait for one); the workload it scales has its own verdict",
}

// RuleFor returns the rule of a group kind; ok is false for a kind without one (exists is
// enough, or the kind is unknown).
func RuleFor(kind string) (Rule, bool) {
	r, ok := rules[kind]
	return r, ok
}

// Watched lists the kinds a wait watches: those whose rule reads status, sorted.
func Watched() []string {
	var out []string
	for k, r := range rules {
		if r.Watch {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Known says whether a kind has a rule or is on the exists-is-enough list.
func Known(kind string) bool {
	_, ok := rules[kind]
	_, enough := ExistsIsEnough[kind]
	return ok || enough
}

// CheckWith judges obj: an object being deleted is in progress (terminating), never ready;
// then the kind's rule (list answers for its related kinds); a kind without a rule is ready
// once it exists.
func CheckWith(obj *unstructured.Unstructured, list Lister) (Result, error) {
	if ts := obj.GetDeletionTimestamp(); ts != nil {
		return progress("terminating (deletion requested at %s)", ts.UTC().Format("15:04:05")), nil
	}
	r, ok := rules[obj.GroupVersionKind().GroupKind().String()]
	if !ok {
		return ready("exists"), nil
	}
	if len(r.Related) > 0 && list == nil {
		return Result{}, fmt.Errorf("judging %s %s needs its related objects (%v)", obj.GetKind(), obj.GetName(), r.Related)
	}
	return r.Check(obj, list)
}

func pure(f func(*unstructured.Unstructured) Result) func(*unstructured.Unstructured, Lister) (Result, error) {
	return func(obj *unstructured.Unstructured, _ Lister) (Result, error) { return f(obj), nil }
}

// typed converts a workload without its pod templates (see withoutTemplate) and judges it.
func typed[T any](f func(*T) Result) func(*unstructured.Unstructured, Lister) (Result, error) {
	return func(obj *unstructured.Unstructured, _ Lister) (Result, error) {
		var v T
		if err := convert(withoutTemplate(obj), &v); err != nil {
			return failed("%v", err), nil
		}
		return f(&v), nil
	}
}

func namespace(obj *unstructured.Unstructured) Result {
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	if phase == "Active" {
		return ready("active")
	}
	return progress("phase %q", phase)
}

func pvc(obj *unstructured.Unstructured) Result {
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	if phase == "Bound" {
		return ready("bound")
	}
	return progress("phase %q", phase)
}

// webhook: a webhook configuration is ready when every Service it calls has a ready
// endpoint. Until then each API request it intercepts fails (failurePolicy Fail) or skips
// the webhook (Ignore), so the install is not done.
func webhook(wh *unstructured.Unstructured, list Lister) (Result, error) {
	for _, svc := range WebhookServices(wh) {
		slices, err := list(kube.EndpointSliceGVK, svc.Namespace, discoveryv1.LabelServiceName)
		if err != nil {
			return Result{}, err
		}
		if ReadyEndpoints(slices, svc.Namespace, svc.Name) == 0 {
			return progress("Service %s has no ready endpoint yet", svc), nil
		}
	}
	return ready("its services have ready endpoints"), nil
}

// WebhookServices are the Services a webhook configuration's webhooks call, in order (a
// webhook calling a URL has none in the cluster).
func WebhookServices(wh *unstructured.Unstructured) []types.NamespacedName {
	var out []types.NamespacedName
	hooks, _, _ := unstructured.NestedSlice(wh.Object, "webhooks")
	for _, h := range hooks {
		m, _ := h.(map[string]any)
		svc, ok, _ := unstructured.NestedMap(m, "clientConfig", "service")
		if !ok {
			continue
		}
		out = append(out, types.NamespacedName{Namespace: fmt.Sprint(svc["namespace"]), Name: fmt.Sprint(svc["name"])})
	}
	return out
}

// ReadyEndpoints counts the ready endpoints of Service namespace/name in slices (any
// EndpointSlices: those of other Services are skipped). An endpoint without a ready
// condition counts, as the EndpointSlice API says to read it.
func ReadyEndpoints(slices []*unstructured.Unstructured, namespace, name string) int {
	n := 0
	for _, s := range slices {
		if s.GetNamespace() != namespace || s.GetLabels()[discoveryv1.LabelServiceName] != name {
			continue
		}
		eps, _, _ := unstructured.NestedSlice(s.Object, "endpoints")
		for _, ep := range eps {
			if r, found, _ := unstructured.NestedBool(ep.(map[string]any), "conditions", "ready"); r || !found {
				n++
			}
		}
	}
	return n
}
