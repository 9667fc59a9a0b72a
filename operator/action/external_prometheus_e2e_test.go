package action_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// extPrecheck runs x precheck of opts on c.
func extPrecheck(t *testing.T, c *cluster.Cluster, opts spec.Options) *action.CheckResult {
	t.Helper()
	p := action.Precheck(config(c))
	p.Spec = &opts
	res, err := p.Run(context.Background())
	if err != nil {
		t.Fatalf("precheck: %v", err)
	}
	return res
}

// extSays says whether rep has a result about object, passed or not, whose message holds want.
func extSays(rep *check.Report, passed bool, object, want string) bool {
	return slices.ContainsFunc(rep.Results, func(r check.Result) bool {
		return r.Passed == passed && r.Object == object && strings.Contains(r.Message, want)
	})
}

// TestExternalPrometheusE2E: a declared Prometheus Service. Absent: precheck says what is
// missing. Present with a ready endpoint: it passes, and the mesh config reports to it.
func TestExternalPrometheusE2E(t *testing.T) {
	c := cluster.Get(t)
	ctx := context.Background()
	ns := c.Namespace(t)
	file := harness.SpecFile(t, "prom.yaml", harness.OperatorHeader+"spec:\n  profile: minimal\n  namespace: "+ns+
		"\n  values:\n    global:\n      istioNamespace: "+ns+"\n  external:\n    prometheus:\n      service: "+ns+"/prometheus:9090\n")
	prom := "Service/" + ns + "/prometheus"

	res := extPrecheck(t, c, spec.Options{Files: []string{file}})
	if !res.Failed || !extSays(res.Report, false, prom, "missing: spec.external.prometheus.service names it") {
		t.Fatalf("precheck without Prometheus: failed %v, want %s missing: %+v", res.Failed, prom, res.Report.Results)
	}

	labels := map[string]string{"app": "prometheus"}
	one := int32(1)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "prometheus", Image: "prom/prometheus", Ports: []corev1.ContainerPort{{ContainerPort: 9090}}}}}}}}
	if _, err := c.Kube.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: ns}, Spec: corev1.ServiceSpec{
		Selector: labels, Ports: []corev1.ServicePort{{Name: "http", Port: 9090, TargetPort: intstr.FromInt32(9090)}}}}
	if _, err := c.Kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The endpoint follows the pod.
	harness.Eventually(t, 30*time.Second, "Prometheus's endpoint ready", func() (bool, string) {
		res = extPrecheck(t, c, spec.Options{Files: []string{file}})
		return !extSays(res.Report, false, prom, "no ready endpoint"), "precheck finds no ready endpoint"
	})
	if res.Failed || !extSays(res.Report, true, prom, "port 9090, 1 ready endpoint(s)") ||
		!extSays(res.Report, true, "ConfigMap/"+ns+"/istio", "the mesh reports metrics to Prometheus (defaultProviders.metrics: [prometheus])") {
		t.Fatalf("precheck with Prometheus: failed %v: %+v", res.Failed, res.Report.Results)
	}

	// A port the Service does not have.
	res = extPrecheck(t, c, spec.Options{Files: []string{file}, Sets: []string{"external.prometheus.service=" + ns + "/prometheus:9091"}})
	if !res.Failed || !extSays(res.Report, false, prom, "has no port 9091 (it has 9090)") {
		t.Fatalf("precheck with a wrong port: failed %v: %+v", res.Failed, res.Report.Results)
	}
}
