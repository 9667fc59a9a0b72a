package readiness

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

// TestClassify: which refusals are permanent, by the apiserver's own words.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		msg               string
		oldPods           bool
		layer             Layer
		permanent, cannot bool
	}{
		{`pods "istiod-1" is forbidden: violates PodSecurity "restricted:latest": seccompProfile (pod or container "discovery" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`, false, PodSecurity, true, false},
		{`pods "istiod-1" is forbidden: violates PodSecurity "baseline:latest": privileged (container "istio-cni" must not set securityContext.privileged=true)`, true, PodSecurity, true, false},
		{`pods "istiod-1" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=0, limited: pods=0`, false, Quota, true, false},
		{`pods "istiod-1" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1`, true, Quota, false, false},
		{`pods "istiod-1" is forbidden: failed quota: compute: must specify limits.cpu for: discovery`, true, Quota, true, false},
		{`pods "istiod-1" is forbidden: status unknown for quota: pods, resource: pods`, false, Quota, false, false},
		{`pods "istiod-1" is forbidden: maximum cpu usage per Container is 100m, but limit is 2`, false, LimitRange, true, false},
		{`Pod "istiod-1" is invalid: spec.containers[0].resources.requests: Invalid value: "500m": must be less than or equal to cpu limit of 100m`, false, Validation, true, false},
		{`pods "istiod-1" is forbidden: ValidatingAdmissionPolicy 'no-host-ports' with binding 'no-host-ports' denied request: host ports are not allowed`, false, Policy, true, false},
		{`admission webhook "deny.example.com" denied the request: no`, false, Webhook, true, false},
		{`admission webhook "side.example.com" does not support dry run`, false, Webhook, false, true},
		{`Internal error occurred: failed calling webhook "x.example.com": dial tcp 127.64.0.9:443: connect: connection refused`, false, Webhook, false, true},
		{`pods "istiod-1" is forbidden: error looking up service account istio-system/istiod: serviceaccount "istiod" not found`, false, ServiceAccount, false, false},
		{`pods "x" is forbidden: unable to create new content in namespace istio-system because it is being terminated`, false, Namespace, false, false},
		{`the server is currently unable to handle the request`, false, Unknown, false, false},
	} {
		got := Classify(tc.msg, tc.oldPods)
		if got.Layer != tc.layer || got.Permanent != tc.permanent || got.CannotCheck != tc.cannot || got.Message != tc.msg {
			t.Errorf("Classify(%q, old pods %v) = %+v; want %s, permanent %v, cannot check %v", tc.msg, tc.oldPods, got, tc.layer, tc.permanent, tc.cannot)
		}
	}
}

// TestRefusedWorkloads: a Deployment fails at its ReplicaSet's permanent FailedCreate,
// a DaemonSet and a StatefulSet at their own FailedCreate events (of the same UID); a
// transient refusal or an old object's event keeps them waiting.
func TestRefusedWorkloads(t *testing.T) {
	const psa = `pods \"x\" is forbidden: violates PodSecurity \"restricted:latest\": runAsNonRoot != true`
	dep := func(replicas, updated int, msg string) string {
		return `{apiVersion: apps/v1, kind: Deployment, metadata: {name: a, generation: 1}, spec: {replicas: 1}, status: {observedGeneration: 1, replicas: ` +
			itoa(replicas) + `, updatedReplicas: ` + itoa(updated) + `, conditions: [{type: ReplicaFailure, status: "True", reason: FailedCreate, message: "` + msg + `"}]}}`
	}
	const ds = `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: cni, namespace: ns, uid: u1, generation: 1}, status: {observedGeneration: 1, desiredNumberScheduled: 2}}`
	const sts = `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, namespace: ns, uid: u3, generation: 1}, spec: {replicas: 1}, status: {observedGeneration: 1}}`
	event := func(kind, name, uid, msg string) string {
		return `{apiVersion: v1, kind: Event, metadata: {name: e, namespace: ns}, reason: FailedCreate, type: Warning, lastTimestamp: "2026-12-04T10:00:00Z",
  involvedObject: {kind: ` + kind + `, name: ` + name + `, uid: ` + uid + `}, message: "` + msg + `"}`
	}
	for _, tc := range []struct {
		name   string
		obj    string
		events []string
		status Status
		msg    string
	}{
		{"deployment refused by pod security", dep(0, 0, psa), nil, Failed, "pods refused by Pod Security: pods"},
		{"deployment over quota", dep(0, 0, `pods \"x\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0`), nil, Failed, "ResourceQuota"},
		{"deployment over quota with old pods", dep(2, 1, `pods \"x\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`), nil, InProgress, "FailedCreate: pods"},
		{"deployment without its service account", dep(0, 0, `pods \"x\" is forbidden: error looking up service account ns/a: serviceaccount \"a\" not found`), nil, InProgress, "FailedCreate"},
		{"daemonset refused", ds, []string{event("DaemonSet", "cni", "u1", "Error creating: "+psa)}, Failed, "pods refused by Pod Security: pods \"x\" is forbidden"},
		{"daemonset event of an earlier object", ds, []string{event("DaemonSet", "cni", "u0", "Error creating: "+psa)}, InProgress, "0 of 2 pods updated"},
		{"daemonset event of another daemonset", ds, []string{event("DaemonSet", "ztunnel", "u2", "Error creating: "+psa)}, InProgress, "0 of 2 pods updated"},
		{"daemonset transient", ds, []string{event("DaemonSet", "cni", "u1", `Error creating: pods \"x\" is forbidden: status unknown for quota: q, resource: pods`)}, InProgress, "0 of 2 pods updated"},
		{"statefulset refused", sts, []string{event("StatefulSet", "db", "u3", "create Pod db-0 in StatefulSet db failed error: "+psa)}, Failed, "pods refused by Pod Security: pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list := func(gvk schema.GroupVersionKind, ns, sel string) ([]*unstructured.Unstructured, error) {
				if gvk.Kind != "Event" || ns != "ns" || sel != "" {
					t.Errorf("listed %s in %q with %q", gvk.Kind, ns, sel)
				}
				var out []*unstructured.Unstructured
				for _, e := range tc.events {
					out = append(out, fixture.Object(t, e))
				}
				return out, nil
			}
			got, err := CheckWith(fixture.Object(t, tc.obj), list)
			if err != nil || got.Status != tc.status || !strings.Contains(got.Message, tc.msg) {
				t.Errorf("CheckWith = %+v, %v; want %s containing %q", got, err, tc.status, tc.msg)
			}
			if (got.Status == Failed) != (got.Refusal != nil) {
				t.Errorf("refusal %+v on a %s verdict", got.Refusal, got.Status)
			}
		})
	}
}

func itoa(i int) string { return string(rune('0' + i)) }
