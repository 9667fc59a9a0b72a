package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kptr "k8s.io/utils/ptr"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// The tests of this file run against the bed's real istiod (hack/realistiod): what istiod
// writes, injects and validates is what they check.

const (
	validator        = "istio-validator-istio-system"
	defaultValidator = "istiod-default-validator"
)

// webhookState is what a validator's first webhook shows, and who manages which field.
type webhookState struct {
	policies []string
	caBundle string
	rv       string
	managers []string
}

func validatorState(t *testing.T, c *cluster.Cluster, name string) webhookState {
	t.Helper()
	v, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	s := webhookState{rv: v.ResourceVersion}
	for _, h := range v.Webhooks {
		s.policies = append(s.policies, string(kptr.Deref(h.FailurePolicy, "")))
		s.caBundle += string(h.ClientConfig.CABundle)
	}
	for _, mf := range v.ManagedFields {
		if mf.FieldsV1 != nil {
			s.managers = append(s.managers, mf.Manager+":"+string(mf.FieldsV1.Raw))
		}
	}
	return s
}

// istiodOwns says whether pilot-discovery manages a field named field of the validator.
func (s webhookState) istiodOwns(field string) bool {
	for _, m := range s.managers {
		if strings.HasPrefix(m, "pilot-discovery:") && strings.Contains(m, `"f:`+field+`"`) {
			return true
		}
	}
	return false
}

// holdFailClose keeps istiod from switching its validators to Fail until the returned func
// runs. Before it switches, istiod proves its webhook rejects invalid config: it dry-runs
// the creation of an invalid Gateway and wants its own webhook's "denied the request". A
// ValidatingAdmissionPolicy (real admission, evaluated before the webhooks) refuses that
// dry run with another message, so istiod keeps waiting, its caBundle already written.
func holdFailClose(t *testing.T, c *cluster.Cluster) (release func()) {
	t.Helper()
	ctx := context.Background()
	api := c.Kube.AdmissionregistrationV1()
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-hold-istiod-fail-close"},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: kptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{"networking.istio.io"}, APIVersions: []string{"*"}, Resources: []string{"gateways"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: "object.metadata.name != 'invalid-gateway'", Message: "held by the e2e test"}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec:       admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	if _, err := api.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		_ = api.ValidatingAdmissionPolicyBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{})
		_ = api.ValidatingAdmissionPolicies().Delete(ctx, policy.Name, metav1.DeleteOptions{})
	}
	t.Cleanup(release)
	return release
}

// TestRealIstiodReinstallE2E: a re-install never fights istiod over the fields it took.
// Before istiod took failurePolicy, a re-install keeps the rendered Ignore (dropping it
// would default to Fail) and istiod's caBundle; after, it changes no object at all. Either
// way it writes nothing and says so; verify-install sees no drift in istiod's fields and
// finds its CA bundles.
func TestRealIstiodReinstallE2E(t *testing.T) {
	c := cluster.Get(t)
	c.RequireRealIstiod(t)
	t.Setenv("HOME", t.TempDir())
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()
	istioctl("uninstall", "--purge", "-y")
	release := holdFailClose(t, c)
	istioctl("install", "-y")

	// istiod writes its CA bundle at once, and cannot switch to Fail while held.
	harness.Eventually(t, 30*time.Second, "istiod wrote the validators' caBundle", func() (bool, string) {
		s := validatorState(t, c, validator)
		return s.istiodOwns("caBundle") && s.caBundle != "", fmt.Sprint(s.managers)
	})
	before := validatorState(t, c, validator)
	if strings.Join(before.policies, ",") != "Ignore" || before.istiodOwns("failurePolicy") {
		t.Fatalf("istiod switched to fail-close although held: %v %v", before.policies, before.managers)
	}
	harness.Settled(t, c)
	versions, writes := harness.ObjectVersions(t, c), harness.AuditWrites(t, c)
	out := istioctl("install", "-y")
	if !strings.Contains(out, "(0 applied, 42 unchanged, 0 pruned)") {
		t.Errorf("re-install before istiod took failurePolicy:\n%s", out)
	}
	after := validatorState(t, c, validator)
	if strings.Join(after.policies, ",") != "Ignore" || after.caBundle != before.caBundle || after.rv != before.rv {
		t.Errorf("re-install before fail-close changed the validator: policies %v (want Ignore), caBundle kept %v, resourceVersion %s -> %s",
			after.policies, after.caBundle == before.caBundle, before.rv, after.rv)
	}
	if w := harness.WritesBetween(writes, harness.AuditWrites(t, c)); len(w) > 0 {
		t.Errorf("re-install before fail-close wrote: %v", w)
	}
	if d := harness.VersionsDiff(versions, harness.ObjectVersions(t, c)); len(d) > 0 {
		t.Errorf("re-install before fail-close changed:\n  %s", strings.Join(d, "\n  "))
	}

	// Released, istiod switches both validators to Fail: the fields are now its own.
	release()
	harness.Eventually(t, 90*time.Second, "istiod switched its validators to Fail", func() (bool, string) {
		a, b := validatorState(t, c, validator), validatorState(t, c, defaultValidator)
		return a.istiodOwns("failurePolicy") && b.istiodOwns("failurePolicy"), fmt.Sprint(a.policies, b.policies)
	})
	rvs := map[string]string{validator: validatorState(t, c, validator).rv, defaultValidator: validatorState(t, c, defaultValidator).rv}
	harness.Settled(t, c)
	versions, writes = harness.ObjectVersions(t, c), harness.AuditWrites(t, c)
	out = istioctl("install", "-y")
	if !strings.Contains(out, "(0 applied, 42 unchanged, 0 pruned)") {
		t.Errorf("re-install after istiod took its fields:\n%s", out)
	}
	for name, rv := range rvs {
		if s := validatorState(t, c, name); s.rv != rv || strings.Contains(strings.Join(s.policies, ","), "Ignore") {
			t.Errorf("re-install after fail-close changed %s: resourceVersion %s -> %s, policies %v", name, rv, s.rv, s.policies)
		}
	}
	if w := harness.WritesBetween(writes, harness.AuditWrites(t, c)); len(w) > 0 {
		t.Errorf("re-install after fail-close wrote: %v", w)
	}
	if d := harness.VersionsDiff(versions, harness.ObjectVersions(t, c)); len(d) > 0 {
		t.Errorf("re-install after fail-close changed:\n  %s", strings.Join(d, "\n  "))
	}

	out = istioctl("verify-install")
	if strings.Contains(out, "differ from the spec") || !strings.Contains(out, "ValidatingWebhookConfiguration/istio-validator-istio-system: every webhook has a CA bundle") {
		t.Errorf("verify-install with istiod's fields:\n%s", out)
	}
}

// injectedBy creates a Deployment in namespace and returns the revision that injected its
// pod ("" for a pod without a sidecar).
func injectedBy(t *testing.T, c *cluster.Cluster, namespace, name string) string {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
			},
		},
	}
	if _, err := c.Kube.AppsV1().Deployments(namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	harness.Eventually(t, 30*time.Second, "the pod of "+namespace+"/"+name+" exists", func() (bool, string) {
		pods, err := c.Kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil || len(pods.Items) == 0 {
			return false, fmt.Sprint(err)
		}
		pod = pods.Items[0]
		return true, ""
	})
	status := pod.Annotations["sidecar.istio.io/status"]
	if status == "" {
		return ""
	}
	var s struct {
		Revision   string   `json:"revision"`
		Containers []string `json:"containers"`
	}
	if err := json.Unmarshal([]byte(status), &s); err != nil {
		t.Fatalf("pod %s: sidecar.istio.io/status %q: %v", pod.Name, status, err)
	}
	proxy := false
	for _, ctr := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		proxy = proxy || ctr.Name == "istio-proxy"
	}
	if !proxy {
		t.Errorf("pod %s says it was injected (%s) but has no istio-proxy", pod.Name, status)
	}
	return s.Revision
}

// TestRealIstiodInjectionE2E: istiod injects pods from the templates our charts render, the
// right revision for each way a namespace selects one, and moving the default tag moves
// where new pods come from.
func TestRealIstiodInjectionE2E(t *testing.T) {
	c := cluster.Get(t)
	c.RequireRealIstiod(t)
	t.Setenv("HOME", t.TempDir())
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()
	enabled := map[string]string{"istio-injection": "enabled"}
	for _, tc := range []struct {
		name    string
		install [][]string
		labels  map[string]string
		want    string
	}{
		{"default profile", [][]string{{"install", "-y"}}, enabled, "default"},
		{"demo profile", [][]string{{"install", "-y", "--set", "profile=demo"}}, enabled, "default"},
		{"minimal profile", [][]string{{"install", "-y", "--set", "profile=minimal"}}, enabled, "default"},
		{"a named revision", [][]string{{"install", "-y", "--set", "profile=minimal", "--revision", "canary"}}, map[string]string{"istio.io/rev": "canary"}, "canary"},
		{"a revision tag", [][]string{{"install", "-y", "--set", "profile=minimal", "--revision", "canary"}, {"tag", "set", "prod", "--revision", "canary"}},
			map[string]string{"istio.io/rev": "prod"}, "canary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			istioctl("uninstall", "--purge", "-y")
			for _, args := range tc.install {
				istioctl(args...)
			}
			ns := harness.LabelledNamespace(t, c, tc.labels)
			if got := injectedBy(t, c, ns, "web"); got != tc.want {
				t.Errorf("injected by revision %q, want %q", got, tc.want)
			}
			plain := c.Namespace(t)
			if got := injectedBy(t, c, plain, "web"); got != "" {
				t.Errorf("a namespace without injection labels got a sidecar from %q", got)
			}
		})
	}

	t.Run("tag set default moves new pods", func(t *testing.T) {
		istioctl("uninstall", "--purge", "-y")
		istioctl("install", "-y", "--set", "profile=minimal")
		istioctl("install", "-y", "--set", "profile=minimal", "--revision", "canary")
		ns := harness.LabelledNamespace(t, c, enabled)
		if got := injectedBy(t, c, ns, "before"); got != "default" {
			t.Fatalf("before the move: injected by %q, want default", got)
		}
		istioctl("tag", "set", "default", "--revision", "canary", "--overwrite", "-y")
		if got := injectedBy(t, c, ns, "after"); got != "canary" {
			t.Errorf("after tag set default --revision canary: injected by %q, want canary", got)
		}
	})
}

var virtualServiceGVR = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}

func virtualService(name string, weight int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"hosts": []any{"a.example"}, "http": []any{map[string]any{
			"route": []any{map[string]any{"destination": map[string]any{"host": "a.example"}, "weight": weight}},
		}}},
	}}
}

// TestRealIstiodValidationAndKillE2E: istiod's webhook refuses invalid Istio config, saying
// so; a killed istiod makes its pod NotReady and verify-install say why, until the bed
// restarts it after a kubelet's back-off.
func TestRealIstiodValidationAndKillE2E(t *testing.T) {
	c := cluster.Get(t)
	c.RequireRealIstiod(t)
	t.Setenv("HOME", t.TempDir())
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()
	istioctl("uninstall", "--purge", "-y")
	istioctl("install", "-y", "--set", "profile=minimal")
	harness.Eventually(t, 60*time.Second, "istiod switched to fail-close", func() (bool, string) {
		s := validatorState(t, c, defaultValidator)
		return s.istiodOwns("failurePolicy"), fmt.Sprint(s.policies)
	})
	ns := c.Namespace(t)
	vs := c.Dynamic.Resource(virtualServiceGVR).Namespace(ns)
	_, err := vs.Create(context.Background(), virtualService("bad", -5), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), `admission webhook "validation.istio.io" denied the request`) || !strings.Contains(err.Error(), "weight -5") {
		t.Errorf("an invalid VirtualService: %v, want validation.istio.io to deny it", err)
	}
	if _, err := vs.Create(context.Background(), virtualService("good", 100), metav1.CreateOptions{}); err != nil {
		t.Errorf("a valid VirtualService: %v", err)
	}

	pod := c.KillIstiod(t, "istio-system", "istiod")
	harness.Eventually(t, 10*time.Second, "the killed istiod's pod is NotReady", func() (bool, string) {
		p, err := c.Kube.CoreV1().Pods("istio-system").Get(context.Background(), pod, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady {
				return cond.Status == corev1.ConditionFalse, string(cond.Status)
			}
		}
		return false, "no Ready condition"
	})
	out, _, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "verify-install")
	if exitCode(err) == 0 || !strings.Contains(out, "Deployment/istio-system/istiod: not ready") ||
		!strings.Contains(out, "pod "+pod+": container discovery: CrashLoopBackOff") {
		t.Errorf("verify-install with istiod killed (exit %d):\n%s", exitCode(err), out)
	}
	// The bed restarts it after 10 s, as a kubelet would.
	harness.Eventually(t, 60*time.Second, "verify-install passes once istiod is back", func() (bool, string) {
		out, _, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "verify-install")
		return err == nil, out
	})
}

// TestRealIstiodPurgeE2E: a purge with istiod running stops it first, then removes what it
// wrote (the root certificate and CRL ConfigMaps in every namespace, its CA Secret, its
// leader elections); afterwards nothing blocks pods or Istio resources.
func TestRealIstiodPurgeE2E(t *testing.T) {
	c := cluster.Get(t)
	c.RequireRealIstiod(t)
	t.Setenv("HOME", t.TempDir())
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	ctx := context.Background()
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()
	istioctl("uninstall", "--purge", "-y")
	istioctl("install", "-y")
	ns := harness.LabelledNamespace(t, c, map[string]string{"istio-injection": "enabled"})
	if got := injectedBy(t, c, ns, "web"); got != "default" {
		t.Fatalf("before the purge: injected by %q", got)
	}
	written := func() []string {
		var out []string
		for _, name := range []string{"istio-ca-root-cert", "istio-ca-crl"} {
			cms, err := c.Kube.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
			if err != nil {
				t.Fatal(err)
			}
			for _, cm := range cms.Items {
				out = append(out, ref.New("ConfigMap", cm.Namespace, cm.Name).String())
			}
		}
		if _, err := c.Kube.CoreV1().Secrets("istio-system").Get(ctx, "istio-ca-secret", metav1.GetOptions{}); err == nil {
			out = append(out, "Secret/istio-system/istio-ca-secret")
		}
		leases, err := c.Kube.CoordinationV1().Leases("istio-system").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range leases.Items {
			out = append(out, "Lease/istio-system/"+l.Name)
		}
		for _, name := range []string{"istio-leader", "istio-namespace-controller-election"} {
			if _, err := c.Kube.CoreV1().ConfigMaps("istio-system").Get(ctx, name, metav1.GetOptions{}); err == nil {
				out = append(out, "ConfigMap/istio-system/"+name)
			}
		}
		return out
	}
	harness.Eventually(t, 30*time.Second, "istiod wrote its objects", func() (bool, string) {
		w := strings.Join(written(), " ")
		return strings.Contains(w, "ConfigMap/"+ns+"/istio-ca-root-cert") && strings.Contains(w, "Secret/istio-system/istio-ca-secret") &&
			strings.Contains(w, "Lease/istio-system/"), w
	})

	istioctl("uninstall", "--purge", "-y")
	// Nothing comes back: istiod stopped before its objects went.
	time.Sleep(2 * time.Second)
	if left := written(); len(left) > 0 {
		t.Errorf("left after the purge: %v", left)
	}
	if got := injectedBy(t, c, ns, "after"); got != "" {
		t.Errorf("a pod after the purge was injected by %q", got)
	}
	// Istio's resources again: Base alone brings the CRDs back and nothing refuses them.
	istioctl("install", "-y", "--set", "profile=empty", "--set", "components.base.enabled=true")
	if _, err := c.Dynamic.Resource(virtualServiceGVR).Namespace(ns).Create(ctx, virtualService("after-purge", 100), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Errorf("creating a VirtualService after the purge: %v", err)
	}
}
