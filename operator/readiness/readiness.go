// Package readiness says whether an applied object is ready, still progressing, or has
// failed, with a message a person can act on. It is the one registry of readiness rules
// (rules.go), shared by install's wait and by verify-install: per kind its verdict, whether
// waits watch it, and the related objects it reads. Verdicts are pure functions of the
// object (and those related objects) as read from the cluster. An object being deleted is
// in progress ("terminating"). Rules per kind: CRD Established; Namespace Active;
// Deployment and DaemonSet fully rolled out (observed generation, updated and ready
// replicas), a passed progress deadline is a failure; StatefulSet partition-aware; Job
// complete; PVC bound; Pod ready; Service given a cluster IP (a LoadBalancer address is not
// waited for: it may never come); a webhook configuration once every Service it calls has
// a ready endpoint. A workload whose pods admission refuses for good (refusal.go: Pod
// Security, a policy, a webhook's denial, a LimitRange, a quota nothing will free) has
// failed, read from a Deployment's ReplicaFailure condition or, for a DaemonSet or
// StatefulSet, from its FailedCreate events. The kinds of ExistsIsEnough are ready once they exist, each with why.
package readiness

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// Status is the verdict on one object.
type Status string

// The verdicts.
const (
	Ready      Status = "Ready"
	InProgress Status = "InProgress"
	Failed     Status = "Failed"
)

// Result is a verdict with what it rests on.
type Result struct {
	Status  Status
	Message string
	// Refusal is set on a workload failed because admission refuses its pods: a wait
	// confirms it is still so (the condition or event may be from before the cause was
	// removed) before it gives up.
	Refusal *Refusal
}

func ready(format string, a ...any) Result {
	return Result{Status: Ready, Message: fmt.Sprintf(format, a...)}
}
func progress(format string, a ...any) Result {
	return Result{Status: InProgress, Message: fmt.Sprintf(format, a...)}
}
func failed(format string, a ...any) Result {
	return Result{Status: Failed, Message: fmt.Sprintf(format, a...)}
}

// Check judges obj by the rules that need nothing but the object (see CheckWith); a kind
// whose rule reads related objects (a webhook configuration) is judged InProgress with a
// message saying so, since those are missing.
func Check(obj *unstructured.Unstructured) Result {
	r, err := CheckWith(obj, nil)
	if err != nil {
		return progress("%v", err)
	}
	return r
}

// withoutTemplate is a workload with only what its verdict reads: name, generation, the
// spec without its pod (and claim) templates, and the status. The templates are most of
// the object and most of the cost of converting it, and a wait judges a workload at every
// change of its status.
func withoutTemplate(obj *unstructured.Unstructured) *unstructured.Unstructured {
	md, _ := obj.Object["metadata"].(map[string]any)
	slimMD := map[string]any{}
	for _, k := range []string{"name", "namespace", "generation", "annotations"} {
		if v, ok := md[k]; ok {
			slimMD[k] = v
		}
	}
	out := map[string]any{"apiVersion": obj.Object["apiVersion"], "kind": obj.Object["kind"], "metadata": slimMD}
	if spec, ok := obj.Object["spec"].(map[string]any); ok {
		slimSpec := make(map[string]any, len(spec))
		for k, v := range spec {
			if k != "template" && k != "volumeClaimTemplates" {
				slimSpec[k] = v
			}
		}
		out["spec"] = slimSpec
	}
	if status, ok := obj.Object["status"]; ok {
		out["status"] = status
	}
	return &unstructured.Unstructured{Object: out}
}

func convert(obj *unstructured.Unstructured, into any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, into); err != nil {
		return fmt.Errorf("reading %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

func crd(obj *unstructured.Unstructured) Result {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "NamesAccepted" && m["status"] == "False" {
			return failed("names not accepted: %v", m["message"])
		}
	}
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return ready("established")
		}
	}
	return progress("not established yet")
}

func deployment(d *appsv1.Deployment) Result {
	if d.Status.ObservedGeneration < d.Generation {
		return progress("waiting for the controller to see generation %d", d.Generation)
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return failed("rollout stuck: %s", c.Message)
		}
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			// The ReplicaSet's FailedCreate: permanent when admission refuses the pods for
			// good (Classify).
			if c.Reason == "FailedCreate" {
				return refused(c.Reason, Classify(c.Message, d.Status.Replicas > d.Status.UpdatedReplicas))
			}
			return progress("%s: %s", c.Reason, c.Message)
		}
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	switch {
	case s.UpdatedReplicas < want:
		return progress("%d of %d replicas updated", s.UpdatedReplicas, want)
	case s.Replicas > s.UpdatedReplicas:
		return progress("%d old replicas pending termination", s.Replicas-s.UpdatedReplicas)
	case s.ReadyReplicas < want:
		return progress("%d of %d replicas ready", s.ReadyReplicas, want)
	case s.AvailableReplicas < want:
		return progress("%d of %d replicas available", s.AvailableReplicas, want)
	}
	return ready("%d/%d replicas ready", s.ReadyReplicas, want)
}

func daemonSet(d *appsv1.DaemonSet) Result {
	if d.Status.ObservedGeneration < d.Generation {
		return progress("waiting for the controller to see generation %d", d.Generation)
	}
	s := d.Status
	if s.DesiredNumberScheduled == 0 {
		return progress("no node to run on (0 scheduled): check its nodeSelector, affinity and tolerations")
	}
	if _, ok := d.Annotations[ownership.AnnotationNodeRollout]; ok && d.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType {
		// Mixed pods are the rollout's way, not a fault: say whose, and how it ends.
		return progress("an in-place upgrade replaces its pods node by node (updateStrategy OnDelete until it ends): %d of %d pods on the new template, %d ready; run the same upgrade again to finish it",
			s.UpdatedNumberScheduled, s.DesiredNumberScheduled, s.NumberReady)
	}
	if d.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType && s.UpdatedNumberScheduled < s.DesiredNumberScheduled {
		return progress("%d of %d pods updated", s.UpdatedNumberScheduled, s.DesiredNumberScheduled)
	}
	if s.NumberReady < s.DesiredNumberScheduled {
		return progress("%d of %d pods ready", s.NumberReady, s.DesiredNumberScheduled)
	}
	return ready("%d/%d pods ready", s.NumberReady, s.DesiredNumberScheduled)
}

func statefulSet(st *appsv1.StatefulSet) Result {
	if st.Status.ObservedGeneration < st.Generation {
		return progress("waiting for the controller to see generation %d", st.Generation)
	}
	want := int32(1)
	if st.Spec.Replicas != nil {
		want = *st.Spec.Replicas
	}
	s := st.Status
	if st.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType {
		partition := int32(0)
		if ru := st.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
			partition = *ru.Partition
		}
		if s.UpdatedReplicas < want-partition {
			return progress("%d of %d replicas updated", s.UpdatedReplicas, want-partition)
		}
		if partition == 0 && s.CurrentRevision != s.UpdateRevision {
			return progress("revision %s rolling out", s.UpdateRevision)
		}
	}
	if s.ReadyReplicas < want {
		return progress("%d of %d replicas ready", s.ReadyReplicas, want)
	}
	return ready("%d/%d replicas ready", s.ReadyReplicas, want)
}

func job(j *batchv1.Job) Result {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return ready("complete")
		case batchv1.JobFailed:
			return failed("%s: %s", c.Reason, c.Message)
		}
	}
	return progress("%d succeeded, %d active, %d failed", j.Status.Succeeded, j.Status.Active, j.Status.Failed)
}

func service(obj *unstructured.Unstructured) Result {
	typ, _, _ := unstructured.NestedString(obj.Object, "spec", "type")
	if typ == "ExternalName" {
		return ready("external name")
	}
	ip, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterIP")
	if ip == "" {
		return progress("no cluster IP yet")
	}
	if typ == "LoadBalancer" {
		ing, _, _ := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress")
		if len(ing) == 0 {
			return ready("cluster IP %s; load balancer address pending (not waited for)", ip)
		}
	}
	return ready("cluster IP %s", ip)
}

func pod(p *corev1.Pod) Result {
	if why := PodProblem(p); why != "" {
		if p.Status.Phase == corev1.PodFailed {
			return failed("%s", why)
		}
		return progress("%s", why)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return ready("ready")
		}
	}
	return progress("phase %s, not ready", p.Status.Phase)
}

// PodProblem names what keeps a pod from running, from its containers' states: the first
// waiting reason (ImagePullBackOff, CrashLoopBackOff, ...) with its message, a scheduling
// failure, or an eviction. "" when nothing is wrong that the pod says.
func PodProblem(p *corev1.Pod) string {
	statuses := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, cs := range statuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
			// A crash loop's own message only repeats the pod; how the container last ended
			// (its exit code, OOMKilled) is what says why.
			if t := cs.LastTerminationState.Terminated; w.Reason == "CrashLoopBackOff" && t != nil {
				return fmt.Sprintf("container %s: CrashLoopBackOff: %s, last exit %d (%s)", cs.Name, restarts(cs.RestartCount), t.ExitCode, t.Reason)
			}
			if w.Message != "" {
				return fmt.Sprintf("container %s: %s: %s", cs.Name, w.Reason, w.Message)
			}
			return fmt.Sprintf("container %s: %s", cs.Name, w.Reason)
		}
		if t := cs.LastTerminationState.Terminated; t != nil && cs.RestartCount > 2 && !cs.Ready {
			return fmt.Sprintf("container %s %s, last exit %d (%s)", cs.Name, restarts(cs.RestartCount), t.ExitCode, t.Reason)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return "unschedulable: " + c.Message
		}
	}
	if p.Status.Reason == "Evicted" {
		return "evicted: " + p.Status.Message
	}
	return ""
}

func restarts(n int32) string {
	if n == 1 {
		return "restarted once"
	}
	return fmt.Sprintf("restarted %d times", n)
}

// PodsWhy says why the pods of a workload (Deployment, DaemonSet, StatefulSet) are not
// ready, one line per distinct problem ("pod NAME: PROBLEM"): what its status alone cannot
// say (a crash loop, an image pull back-off, an unschedulable pod). list answers for pods.
func PodsWhy(obj *unstructured.Unstructured, list Lister) []string {
	switch obj.GetKind() {
	case "Deployment", "DaemonSet", "StatefulSet":
	default:
		return nil
	}
	sel, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "selector", "matchLabels")
	if len(sel) == 0 || list == nil {
		return nil
	}
	pods, err := list(kube.PodGVK, obj.GetNamespace(), labels.Set(sel).String())
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, u := range pods {
		var p corev1.Pod
		if convert(u, &p) != nil {
			continue
		}
		why := PodProblem(&p)
		if why == "" && p.Status.Phase == corev1.PodRunning && !podIsReady(&p) {
			why = "running, not ready"
		}
		if why != "" && !seen[why] {
			seen[why] = true
			out = append(out, fmt.Sprintf("pod %s: %s", p.Name, why))
		}
	}
	sort.Strings(out)
	return out
}

func podIsReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
