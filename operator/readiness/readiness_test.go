package readiness

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		yaml   string
		status Status
		msg    string
	}{
		{"crd established", `{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: a}, status: {conditions: [{type: Established, status: "True"}]}}`, Ready, "established"},
		{"crd pending", `{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: a}}`, InProgress, "not established"},
		{"crd names rejected", `{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: a}, status: {conditions: [{type: NamesAccepted, status: "False", message: clash}]}}`, Failed, "clash"},
		{"namespace active", `{apiVersion: v1, kind: Namespace, metadata: {name: a}, status: {phase: Active}}`, Ready, ""},
		{"namespace terminating", `{apiVersion: v1, kind: Namespace, metadata: {name: a}, status: {phase: Terminating}}`, InProgress, "Terminating"},
		{"deployment ready", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: a, generation: 2}, spec: {replicas: 2}, status: {observedGeneration: 2, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2}}`, Ready, "2/2"},
		{"deployment default one replica", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: a, generation: 1}, spec: {}, status: {observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1}}`, Ready, "1/1"},
		{"deployment old generation", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: a, generation: 3}, spec: {replicas: 1}, status: {observedGeneration: 2, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1}}`, InProgress, "generation 3"},
		{"deployment rolling", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: a, generation: 1}, spec: {replicas: 2}, status: {observedGeneration: 1, replicas: 3, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2}}`, InProgress, "1 old replicas"},
		{"deployment not ready", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: a, generation: 1}, spec: {replicas: 2}, status: {observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 1}}`, InProgress, "1 of 2 replicas ready"},
		{"deployment deadline", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: a, generation: 1}, spec: {replicas: 1}, status: {observedGeneration: 1, conditions: [{type: Progressing, status: "False", reason: ProgressDeadlineExceeded, message: "ReplicaSet a-1 has timed out progressing."}]}}`, Failed, "timed out progressing"},
		{"deployment replica failure", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: a, generation: 1}, spec: {replicas: 1}, status: {observedGeneration: 1, conditions: [{type: ReplicaFailure, status: "True", reason: FailedCreate, message: "admission webhook denied"}]}}`, InProgress, "FailedCreate: admission webhook denied"},
		{"daemonset ready", `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: a, generation: 1}, status: {observedGeneration: 1, desiredNumberScheduled: 2, updatedNumberScheduled: 2, numberReady: 2}}`, Ready, "2/2"},
		{"daemonset nowhere", `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: a, generation: 1}, status: {observedGeneration: 1, desiredNumberScheduled: 0}}`, InProgress, "no node"},
		{"daemonset updating", `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: a, generation: 1}, spec: {updateStrategy: {type: RollingUpdate}}, status: {observedGeneration: 1, desiredNumberScheduled: 2, updatedNumberScheduled: 1, numberReady: 2}}`, InProgress, "1 of 2 pods updated"},
		{"daemonset rolled node by node", `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: a, generation: 2, annotations: {install.operator.istio.io/node-rollout: x}}, spec: {updateStrategy: {type: OnDelete}}, status: {observedGeneration: 2, desiredNumberScheduled: 4, updatedNumberScheduled: 1, numberReady: 3}}`, InProgress, "node by node (updateStrategy OnDelete until it ends): 1 of 4 pods on the new template, 3 ready; run the same upgrade again"},
		{"daemonset ondelete ignores updates", `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: a, generation: 1}, spec: {updateStrategy: {type: OnDelete}}, status: {observedGeneration: 1, desiredNumberScheduled: 2, updatedNumberScheduled: 0, numberReady: 2}}`, Ready, ""},
		{"statefulset partition", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: a, generation: 1}, spec: {replicas: 3, updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 2}}}, status: {observedGeneration: 1, updatedReplicas: 1, readyReplicas: 3, currentRevision: r1, updateRevision: r2}}`, Ready, "3/3"},
		{"statefulset revision", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: a, generation: 1}, spec: {replicas: 1, updateStrategy: {type: RollingUpdate}}, status: {observedGeneration: 1, updatedReplicas: 1, readyReplicas: 1, currentRevision: r1, updateRevision: r2}}`, InProgress, "r2"},
		{"job complete", `{apiVersion: batch/v1, kind: Job, metadata: {name: a}, status: {conditions: [{type: Complete, status: "True"}]}}`, Ready, ""},
		{"job failed", `{apiVersion: batch/v1, kind: Job, metadata: {name: a}, status: {conditions: [{type: Failed, status: "True", reason: BackoffLimitExceeded, message: too many}]}}`, Failed, "BackoffLimitExceeded"},
		{"service", `{apiVersion: v1, kind: Service, metadata: {name: a}, spec: {clusterIP: 127.64.0.10}}`, Ready, "127.64.0.10"},
		{"service without ip", `{apiVersion: v1, kind: Service, metadata: {name: a}, spec: {}}`, InProgress, ""},
		{"lb not waited", `{apiVersion: v1, kind: Service, metadata: {name: a}, spec: {type: LoadBalancer, clusterIP: 127.64.0.10}}`, Ready, "pending (not waited for)"},
		{"pvc", `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: a}, status: {phase: Pending}}`, InProgress, "Pending"},
		{"configmap", `{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}`, Ready, "exists"},
		{"webhook without its endpoints", `{apiVersion: admissionregistration.k8s.io/v1, kind: MutatingWebhookConfiguration, metadata: {name: a}}`, InProgress, "needs its related objects"},
		{"terminating deployment", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: a, generation: 1, deletionTimestamp: "2026-12-01T10:00:00Z"}, spec: {replicas: 1}, status: {observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1}}`, InProgress, "terminating"},
		{"terminating configmap", `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, deletionTimestamp: "2026-12-01T10:00:00Z"}}`, InProgress, "terminating"},
		{"pod pulling", `{apiVersion: v1, kind: Pod, metadata: {name: a}, status: {phase: Pending, containerStatuses: [{name: discovery, state: {waiting: {reason: ImagePullBackOff, message: "pull access denied"}}}]}}`, InProgress, "container discovery: ImagePullBackOff: pull access denied"},
		{"pod ready", `{apiVersion: v1, kind: Pod, metadata: {name: a}, status: {phase: Running, conditions: [{type: Ready, status: "True"}]}}`, Ready, ""},
		{"pod unschedulable", `{apiVersion: v1, kind: Pod, metadata: {name: a}, status: {phase: Pending, conditions: [{type: PodScheduled, status: "False", reason: Unschedulable, message: "0/2 nodes are available"}]}}`, InProgress, "unschedulable: 0/2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(fixture.Object(t, tc.yaml))
			if got.Status != tc.status || !strings.Contains(got.Message, tc.msg) {
				t.Errorf("Check = %+v, want %s containing %q", got, tc.status, tc.msg)
			}
		})
	}
}

// TestPodProblemCrashLoop: a container that keeps exiting is named with how it last ended,
// in back-off (the back-off's own message only repeats the pod) or between restarts.
func TestPodProblemCrashLoop(t *testing.T) {
	oom := &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}
	for _, tc := range []struct {
		name string
		cs   corev1.ContainerStatus
		want string
	}{
		{"restarting", corev1.ContainerStatus{Name: "istio-proxy", RestartCount: 5,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}},
			"container istio-proxy restarted 5 times, last exit 1 (Error)"},
		{"in back-off", corev1.ContainerStatus{Name: "discovery", RestartCount: 1,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container=discovery pod=istiod-1_istio-system(u)"}},
			LastTerminationState: corev1.ContainerState{Terminated: oom}},
			"container discovery: CrashLoopBackOff: restarted once, last exit 137 (OOMKilled)"},
		{"in back-off, no last state", corev1.ContainerStatus{Name: "discovery", RestartCount: 1,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s"}}},
			"container discovery: CrashLoopBackOff: back-off 10s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{tc.cs}}}
			if got := PodProblem(p); got != tc.want {
				t.Errorf("PodProblem = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestWebhookRule: a webhook configuration is ready once every Service it calls has a
// ready endpoint; a URL webhook needs nothing; an endpoint without a ready condition counts.
func TestWebhookRule(t *testing.T) {
	const hooks = `{apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingWebhookConfiguration, metadata: {name: v},
  webhooks: [{name: a, clientConfig: {service: {namespace: istio-system, name: istiod}}}, {name: b, clientConfig: {url: "https://x"}}]}`
	slice := func(ns, svc, ready string) string {
		return `{apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: s, namespace: ` + ns + `, labels: {kubernetes.io/service-name: ` + svc + `}}, endpoints: [{addresses: [10.244.0.1]` + ready + `}]}`
	}
	for _, tc := range []struct {
		name   string
		slices []string
		status Status
		msg    string
	}{
		{"no slice", nil, InProgress, "Service istio-system/istiod has no ready endpoint yet"},
		{"not ready", []string{slice("istio-system", "istiod", ", conditions: {ready: false}")}, InProgress, "no ready endpoint"},
		{"another service's", []string{slice("istio-system", "other", ", conditions: {ready: true}")}, InProgress, "no ready endpoint"},
		{"another namespace's", []string{slice("default", "istiod", ", conditions: {ready: true}")}, InProgress, "no ready endpoint"},
		{"ready", []string{slice("istio-system", "istiod", ", conditions: {ready: true}")}, Ready, "ready endpoints"},
		{"ready unknown counts", []string{slice("istio-system", "istiod", "")}, Ready, "ready endpoints"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			list := func(gvk schema.GroupVersionKind, ns, sel string) ([]*unstructured.Unstructured, error) {
				asked = append(asked, gvk.Kind+" "+ns+" "+sel)
				var out []*unstructured.Unstructured
				for _, s := range tc.slices {
					out = append(out, fixture.Object(t, s))
				}
				return out, nil
			}
			got, err := CheckWith(fixture.Object(t, hooks), list)
			if err != nil || got.Status != tc.status || !strings.Contains(got.Message, tc.msg) {
				t.Errorf("CheckWith = %+v, %v; want %s containing %q", got, err, tc.status, tc.msg)
			}
			if len(asked) != 1 || asked[0] != "EndpointSlice istio-system kubernetes.io/service-name" {
				t.Errorf("asked for %v", asked)
			}
		})
	}
}

func TestPodsWhy(t *testing.T) {
	dep := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "istiod", "namespace": "istio-system"},
		"spec":     map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "istiod"}}},
	}}
	pod := func(name string, status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name, "namespace": "istio-system"}, "status": status}}
	}
	crashing := map[string]any{"phase": "Running", "containerStatuses": []any{map[string]any{
		"name": "discovery", "restartCount": int64(1), "ready": false,
		"state": map[string]any{"waiting": map[string]any{"reason": "CrashLoopBackOff", "message": "back-off 10s"}}}}}
	unready := map[string]any{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": "False"}}}
	ready := map[string]any{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	var asked string
	list := func(pods ...*unstructured.Unstructured) Lister {
		return func(gvk schema.GroupVersionKind, ns, sel string) ([]*unstructured.Unstructured, error) {
			asked = gvk.Kind + " " + ns + " " + sel
			return pods, nil
		}
	}
	for _, tc := range []struct {
		name string
		pods []*unstructured.Unstructured
		want string
	}{
		{"a crash loop", []*unstructured.Unstructured{pod("a", crashing), pod("b", ready)}, "pod a: container discovery: CrashLoopBackOff: back-off 10s"},
		{"running, not ready", []*unstructured.Unstructured{pod("a", unready)}, "pod a: running, not ready"},
		{"the same problem once", []*unstructured.Unstructured{pod("a", crashing), pod("b", crashing)}, "pod a: container discovery: CrashLoopBackOff: back-off 10s"},
		{"all ready", []*unstructured.Unstructured{pod("a", ready)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(PodsWhy(dep, list(tc.pods...)), "|")
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if asked != "Pod istio-system app=istiod" {
				t.Errorf("listed %q", asked)
			}
		})
	}
}
