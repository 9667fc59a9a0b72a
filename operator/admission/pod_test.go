package admission

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

const privileged = `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: cni, namespace: istio-system},
  spec: {template: {metadata: {labels: {app: cni}, annotations: {a: b}}, spec: {serviceAccountName: cni,
    containers: [{name: install-cni, image: cni, securityContext: {privileged: true}}]}}}}`

// TestPodFor: a workload's pod carries its template's labels, annotations and spec; other
// kinds have none.
func TestPodFor(t *testing.T) {
	p := PodFor(fixture.Object(t, privileged))
	if p == nil || p.GetKind() != "Pod" || p.GetNamespace() != "istio-system" || p.GetGenerateName() != "cni-" ||
		p.GetLabels()["app"] != "cni" || p.GetAnnotations()["a"] != "b" {
		t.Fatalf("PodFor = %v", p)
	}
	if sa, _, _ := unstructured.NestedString(p.Object, "spec", "serviceAccountName"); sa != "cni" {
		t.Errorf("serviceAccountName %q", sa)
	}
	cron := fixture.Object(t, `{apiVersion: batch/v1, kind: CronJob, metadata: {name: c, namespace: n}, spec: {jobTemplate: {spec: {template: {spec: {containers: [{name: a, image: a}]}}}}}}`)
	if PodFor(cron) == nil {
		t.Error("no pod for a CronJob")
	}
	if PodFor(fixture.Object(t, `{apiVersion: v1, kind: Service, metadata: {name: s}}`)) != nil {
		t.Error("a pod for a Service")
	}
}

// TestPodSecurity: the local evaluation at the level a namespace's labels set.
func TestPodSecurity(t *testing.T) {
	pod := PodFor(fixture.Object(t, privileged))
	for _, tc := range []struct {
		labels map[string]string
		want   string
		err    bool
	}{
		{nil, "", false},
		{map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}, "", false},
		{map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}, `violates PodSecurity "baseline:latest": privileged (container "install-cni" must not set securityContext.privileged=true)`, false},
		{map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "v1.30"}, `"restricted:v1.30"`, false},
		{map[string]string{"pod-security.kubernetes.io/enforce": "strict"}, "", true},
	} {
		r, err := PodSecurity(pod, tc.labels)
		if (err != nil) != tc.err {
			t.Errorf("%v: err %v", tc.labels, err)
			continue
		}
		switch {
		case tc.want == "" && r != nil:
			t.Errorf("%v: refused: %+v", tc.labels, r)
		case tc.want != "" && (r == nil || !r.Permanent || !strings.Contains(r.Message, tc.want)):
			t.Errorf("%v: %+v, want a permanent refusal with %q", tc.labels, r, tc.want)
		}
	}
}
