package cmd_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestGatewayPortWithoutTargetPortE2E: a gateway Service port without targetPort renders
// targetPort 0, as upstream; the apiserver defaults it to the port, verify-install does not
// call that drift, and a second install writes nothing.
func TestGatewayPortWithoutTargetPortE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	x := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}
	x.MustRun("uninstall", "--purge", "-y")
	x.PurgeAtEnd()
	f := harness.SpecFile(t, "spec.yaml", harness.OperatorHeader+`spec:
  profile: minimal
  components:
    ingressGateways:
    - name: istio-ingressgateway
      enabled: true
      k8s:
        service:
          ports:
          - port: 15021
            name: status-port
            targetPort: 15021
          - port: 8080
            name: http2
  values:
    gateways:
      istio-ingressgateway:
        runAsRoot: true
`)
	if out, err := x.Try("install", "-y", "-f", f); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	svc, err := c.Kube.CoreV1().Services("istio-system").Get(ctx, "istio-ingressgateway", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range svc.Spec.Ports {
		if p.Name == "http2" && p.TargetPort.IntValue() != 8080 {
			t.Errorf("live targetPort of http2: %v, want the apiserver's default 8080", p.TargetPort)
		}
	}
	out, err := x.Try("verify-install", "-f", f)
	if err != nil || strings.Contains(out, "differ from the spec") {
		t.Errorf("verify-install: %v\n%s", err, out)
	}
	harness.Settled(t, c)
	writes := harness.AuditWrites(t, c)
	if out, err := x.Try("install", "-y", "-f", f); err != nil {
		t.Fatalf("second install: %v\n%s", err, out)
	}
	if w := harness.WritesBetween(writes, harness.AuditWrites(t, c)); len(w) > 0 {
		t.Errorf("the second install wrote: %v", w)
	}
}
