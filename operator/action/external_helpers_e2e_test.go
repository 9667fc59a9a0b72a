package action_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// The helpers of the external_*_e2e tests: installs relying on pieces outside the spec.

var extCRDs = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// extConfig is config(c) at this build's version, as the command layer gives it: istiod's
// version label is what the proxies' skew is judged against.
func extConfig(c *cluster.Cluster) *action.Config {
	cfg := config(c)
	cfg.Version = version.Version
	return cfg
}

// extInstall runs an install of opts (at this build's version) to its end, as install -y.
func extInstall(c *cluster.Cluster, in action.Install, opts spec.Options) (*action.InstallResult, *event.Recorder, error) {
	rec := &event.Recorder{}
	opts.Version = version.Version
	if in.Config == nil {
		in.Config = extConfig(c)
	}
	in.Spec, in.ReadinessTimeout, in.HistoryMax, in.Events = opts, 5*time.Minute, action.DefaultHistoryMax, rec
	res, err := in.Run(context.Background(), nil)
	return res, rec, err
}

// extMustInstall is extInstall that fails the test on an error.
func extMustInstall(t *testing.T, c *cluster.Cluster, in action.Install, opts spec.Options) (*action.InstallResult, *event.Recorder) {
	t.Helper()
	res, rec, err := extInstall(c, in, opts)
	if err != nil {
		t.Fatalf("install %v %v: %v\n%s", opts.Files, opts.Sets, err, messages(rec, event.Warning))
	}
	return res, rec
}

// extEvent says whether rec holds an event of type typ about object ("": any) whose
// message holds want.
func extEvent(rec *event.Recorder, typ event.Type, object, want string) bool {
	return slices.ContainsFunc(rec.Of(typ), func(e event.Event) bool {
		return (object == "" || e.Object == object) && strings.Contains(e.Message, want)
	})
}

// extMentions says whether any event of rec names s, in its object, message or details.
func extMentions(rec *event.Recorder, s string) bool {
	return slices.ContainsFunc(rec.Events, func(e event.Event) bool {
		return strings.Contains(e.Object, s) || strings.Contains(e.Message, s) || strings.Contains(strings.Join(e.Details, "\n"), s)
	})
}

// extAnySays says whether any result of rep has a message holding want.
func extAnySays(rep *check.Report, want string) bool {
	return slices.ContainsFunc(rep.Results, func(r check.Result) bool { return strings.Contains(r.Message, want) })
}

// extErrorSays fails the test unless err holds every one of wants.
func extErrorSays(t *testing.T, what string, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s succeeded", what)
		return
	}
	mustContain(t, what, err.Error(), wants...)
}

// extControlPlaneVersions records the resourceVersion of the control plane's objects, to
// show an install that relies on it leaves it alone.
func extControlPlaneVersions(t *testing.T, c *cluster.Cluster) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	if d, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod", metav1.GetOptions{}); err == nil {
		out["Deployment/istiod"] = d.ResourceVersion
	}
	if s, err := c.Kube.CoreV1().Services("istio-system").Get(ctx, "istiod", metav1.GetOptions{}); err == nil {
		out["Service/istiod"] = s.ResourceVersion
	}
	if cm, err := c.Kube.CoreV1().ConfigMaps("istio-system").Get(ctx, "istio", metav1.GetOptions{}); err == nil {
		out["ConfigMap/istio"] = cm.ResourceVersion
	}
	if sa, err := c.Kube.CoreV1().ServiceAccounts("istio-system").Get(ctx, "istiod", metav1.GetOptions{}); err == nil {
		out["ServiceAccount/istiod"] = sa.ResourceVersion
	}
	if w, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "istio-sidecar-injector", metav1.GetOptions{}); err == nil {
		out["MutatingWebhookConfiguration/istio-sidecar-injector"] = w.ResourceVersion
	}
	if crd, err := c.Dynamic.Resource(extCRDs).Get(ctx, "gateways.networking.istio.io", metav1.GetOptions{}); err == nil {
		out["CRD/gateways.networking.istio.io"] = crd.GetResourceVersion()
	}
	if len(out) != 6 {
		t.Fatalf("the control plane is incomplete: %v", out)
	}
	// The default revision tag, when an install set it (Helm does not).
	if w, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "istio-revision-tag-default", metav1.GetOptions{}); err == nil {
		out["MutatingWebhookConfiguration/istio-revision-tag-default"] = w.ResourceVersion
	}
	return out
}

func extSameVersions(t *testing.T, when string, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: %s changed (resourceVersion %s -> %q)", when, k, v, after[k])
		}
	}
}

// extGatewayReady checks the gateway install left a ready gateway wired to istio-system's
// istiod.
func extGatewayReady(t *testing.T, c *cluster.Cluster, ns string) {
	t.Helper()
	d, err := c.Kube.AppsV1().Deployments(ns).Get(context.Background(), "istio-ingressgateway", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("gateway Deployment: %v", err)
	}
	if d.Status.ReadyReplicas < 1 {
		t.Errorf("gateway not ready: %+v", d.Status)
	}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "CA_ADDR" && e.Value != "istiod.istio-system.svc:15012" {
			t.Errorf("the gateway's CA_ADDR is %q, not the existing istiod", e.Value)
		}
	}
}

func extGone(t *testing.T, c *cluster.Cluster, ns, deployment string) {
	t.Helper()
	_, err := c.Kube.AppsV1().Deployments(ns).Get(context.Background(), deployment, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Deployment %s/%s still there (%v)", ns, deployment, err)
	}
}

// The gateways' spec relies on the control plane: no name of its own, so without the
// declaration its prune and uninstall would select istiod too.
const extGatewaysSpec = `spec:
  profile: empty
  external:
    controlPlane: {namespace: istio-system}
  components:
    ingressGateways:
    - name: istio-ingressgateway
      namespace: istio-gateways
      enabled: true
`

func extCleanGateways(t *testing.T, c *cluster.Cluster) {
	t.Cleanup(func() {
		_ = c.Kube.CoreV1().Namespaces().Delete(context.Background(), "istio-gateways", metav1.DeleteOptions{})
	})
}

// extUninstallGateways removes the gateways' install of file, as uninstall -f FILE -y.
func extUninstallGateways(t *testing.T, c *cluster.Cluster, file string) (*action.UninstallPlan, *event.Recorder) {
	t.Helper()
	rec := &event.Recorder{}
	u := &action.Uninstall{Config: extConfig(c), Spec: spec.Options{Files: []string{file}, Version: version.Version}, Timeout: 5 * time.Minute, Events: rec}
	plan, err := u.Run(context.Background(), nil)
	if err != nil {
		t.Fatalf("uninstall of the gateways: %v", err)
	}
	return plan, rec
}

// extVerify runs verify-install of opts on c.
func extVerify(t *testing.T, c *cluster.Cluster, opts spec.Options) *action.CheckResult {
	t.Helper()
	v := action.Verify(extConfig(c))
	opts.Version = version.Version
	v.Spec = &opts
	res, err := v.Run(context.Background())
	if err != nil {
		t.Fatalf("verify-install: %v", err)
	}
	return res
}

// extNextMinor is the release after v's minor (1.31.0 -> 1.32.0).
func extNextMinor(t *testing.T, v string) string {
	t.Helper()
	var major, minor, patch int
	if _, err := fmt.Sscanf(v, "%d.%d.%d", &major, &minor, &patch); err != nil {
		t.Fatalf("version %q: %v", v, err)
	}
	return fmt.Sprintf("%d.%d.0", major, minor+1)
}
