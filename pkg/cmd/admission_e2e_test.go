package cmd_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

// The ValidatingAdmissionPolicy of the admission tests: in-tree CEL admission that denies
// a field the charts set (istiod's and the gateways' pods opt out of sidecar injection).
const sidecarsRequired = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: sidecars-required}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  validations:
  - expression: "!has(object.metadata.labels) || !('sidecar.istio.io/inject' in object.metadata.labels) || object.metadata.labels['sidecar.istio.io/inject'] != 'false'"
    message: pods must not opt out of sidecar injection
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: sidecars-required}
spec:
  policyName: sidecars-required
  validationActions: [Deny]
`

// An admission cause: what to apply to the cluster (in istio-system unless the object
// names its namespace), with the profile it refuses and what the refusal says.
type admissionCase struct {
	name, profile string
	objects       string
	// label is set on istio-system instead of applying objects.
	label string
	want  []string
}

var admissionCases = []admissionCase{
	{name: "pod security restricted", profile: "default", label: "pod-security.kubernetes.io/enforce=restricted",
		want: []string{"refused by Pod Security", `violates PodSecurity "restricted:latest"`}},
	{name: "pod security baseline", profile: "ambient", label: "pod-security.kubernetes.io/enforce=baseline",
		want: []string{"Pod of DaemonSet/istio-system/istio-cni-node: refused by Pod Security", `violates PodSecurity "baseline:latest"`}},
	{name: "resource quota", profile: "default",
		objects: "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: no-pods}\nspec: {hard: {pods: \"0\"}}\n",
		want:    []string{"refused by ResourceQuota", "exceeded quota: no-pods"}},
	{name: "limit range", profile: "default",
		objects: "apiVersion: v1\nkind: LimitRange\nmetadata: {name: small}\nspec:\n  limits: [{type: Container, max: {cpu: 100m}}]\n",
		want:    []string{"Pod of Deployment/istio-system/istiod: refused by validation", "must be less than or equal to cpu limit of 100m"}},
	{name: "validating admission policy", profile: "default", objects: sidecarsRequired,
		want: []string{"Pod of Deployment/istio-system/istiod: refused by ValidatingAdmissionPolicy",
			"ValidatingAdmissionPolicy 'sidecars-required' with binding 'sidecars-required' denied request: pods must not opt out of sidecar injection"}},
}

// kubectlIn applies or deletes (waiting until gone) the objects of yaml, in namespace ns
// unless they are cluster-scoped.
func kubectlIn(t *testing.T, c *cluster.Cluster, verb, ns, docs string) {
	t.Helper()
	client, err := kube.NewClientForConfig(c.Config, ownership.KubeOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, doc := range strings.Split(docs, "\n---\n") {
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(j); err != nil {
			t.Fatal(err)
		}
		if _, m, err := client.Resource(o.GroupVersionKind(), ns); err != nil {
			t.Fatal(err)
		} else if m.Scope.Name() == meta.RESTScopeNameNamespace {
			o.SetNamespace(ns)
		}
		if verb == "apply" {
			if _, err := client.Apply(ctx, o, kube.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := client.Delete(ctx, o, false); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		harness.Eventually(t, time.Minute, kube.Describe(o)+" is gone", func() (bool, string) {
			live, err := client.Get(ctx, o)
			return err == nil && live == nil, fmt.Sprint(err)
		})
	}
}

// labelIstioNamespace sets (value "") or removes (value "-") a label of istio-system.
func labelIstioNamespace(t *testing.T, c *cluster.Cluster, key, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
	if value == "-" {
		patch = fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, key)
	}
	if _, err := c.Kube.CoreV1().Namespaces().Patch(context.Background(), "istio-system", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// noIstioNamespace removes istio-system and waits until it is gone.
func noIstioNamespace(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	_ = c.Kube.CoreV1().Namespaces().Delete(ctx, "istio-system", metav1.DeleteOptions{})
	harness.Eventually(t, 2*time.Minute, "istio-system is gone", func() (bool, string) {
		_, err := c.Kube.CoreV1().Namespaces().Get(ctx, "istio-system", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// precheckWritesNothing runs precheck -v (every passing check printed) and fails the test if it wrote anything (audit log
// and every object's content); it returns the output and exit code.
func precheckWritesNothing(t *testing.T, c *cluster.Cluster, x harness.Istioctl, args ...string) (string, int) {
	t.Helper()
	var out string
	var err error
	writesNothing(t, c, "precheck", args, func() { out, err = x.Try(append([]string{"x", "precheck", "-v"}, args...)...) })
	return out, exitCode(err)
}

// writesNothing runs fn and fails the test if the command it runs (what, args) wrote
// anything: the audit log's writes (the cluster lock's Lease left out) and every object's
// resourceVersion.
func writesNothing(t *testing.T, c *cluster.Cluster, what string, args []string, fn func()) {
	t.Helper()
	versions, writes := harness.ObjectVersions(t, c), harness.AuditWrites(t, c)
	fn()
	var wrote []string
	for _, w := range harness.WritesBetween(writes, harness.AuditWrites(t, c)) {
		if !strings.HasPrefix(w, "POST selfsubjectaccessreviews ") { // asks, stores nothing
			wrote = append(wrote, w)
		}
	}
	if len(wrote) > 0 {
		t.Errorf("%s %v wrote: %v", what, args, wrote)
	}
	if d := harness.VersionsDiff(versions, harness.ObjectVersions(t, c)); len(d) > 0 {
		t.Errorf("%s %v changed:\n  %s", what, args, strings.Join(d, "\n  "))
	}
}

// TestAdmissionPrecheckE2E: precheck proves by dry runs that the cluster admits what the
// install creates. A clean cluster gives no finding; each admission layer's refusal is
// named with its message and fails precheck, with istio-system absent (the policy: the
// namespaced causes cannot exist there yet) and present; nothing is written. A webhook that
// cannot answer a dry run is "cannot check", not a refusal.
func TestAdmissionPrecheckE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	x := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}
	x.MustOutput("uninstall", "--purge", "-y")
	noIstioNamespace(t, c)

	out, code := precheckWritesNothing(t, c, x)
	if code != 0 || strings.Contains(out, "✘") || !strings.Contains(out, "Namespace/istio-system: admitted (does not exist yet: the install creates it)") {
		t.Errorf("precheck of a clean cluster without istio-system: exit %d\n%s", code, out)
	}
	if _, err := c.Kube.CoreV1().Namespaces().Get(context.Background(), "istio-system", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("precheck created istio-system (%v)", err)
	}
	kubectlIn(t, c, "apply", "default", sidecarsRequired)
	sidecarsRequiredInForce(t, c, "default", true)
	out, code = precheckWritesNothing(t, c, x)
	if code != 1 {
		t.Errorf("precheck with the policy, istio-system absent: exit %d, want 1\n%s", code, out)
	}
	mustContain(t, "policy, istio-system absent", out, append(admissionCases[4].want,
		"policies and webhooks asked in namespace default, as ServiceAccount default: namespace istio-system does not exist yet")...)
	kubectlIn(t, c, "delete", "default", sidecarsRequired)
	sidecarsRequiredInForce(t, c, "default", false)

	if _, err := c.Kube.CoreV1().Namespaces().Create(context.Background(), fixture.Namespace("istio-system"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, code = precheckWritesNothing(t, c, x)
	if code != 0 || strings.Contains(out, "✘") || !strings.Contains(out, "Admission\n---------\n✔ (Cluster): admits ") {
		t.Errorf("precheck of a clean cluster with istio-system: exit %d\n%s", code, out)
	}
	for _, tc := range admissionCases {
		t.Run(tc.name, func(t *testing.T) {
			undo := admissionCause(t, c, tc)
			defer undo()
			out, code := precheckWritesNothing(t, c, x, "--set", "profile="+tc.profile)
			if code != 1 {
				t.Errorf("exit %d, want 1\n%s", code, out)
			}
			mustContain(t, tc.name, out, tc.want...)
		})
	}

	// A policy on CRDs: the CRDs, otherwise not asked (no layer judges them), are asked.
	const noIstioCRDs = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-istio-crds}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [apiextensions.k8s.io], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [customresourcedefinitions]}
  validations:
  - expression: "!object.spec.group.endsWith('istio.io')"
    message: no Istio CRDs here
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-istio-crds}
spec:
  policyName: no-istio-crds
  validationActions: [Deny]
`
	if !strings.Contains(out, "CRDs not asked: no admission policy or webhook judges CRDs") {
		t.Errorf("precheck of a clean cluster asked about the CRDs:\n%s", out)
	}
	kubectlIn(t, c, "apply", "default", noIstioCRDs)
	crdsRefused := func(on bool) {
		client, err := kube.NewClientForConfig(c.Config, ownership.KubeOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		ri, _, err := client.Resource(kube.CRDGVK, "")
		if err != nil {
			t.Fatal(err)
		}
		crd := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "probes.probe.istio.io"},
			"spec": map[string]any{"group": "probe.istio.io", "scope": "Namespaced", "names": map[string]any{"plural": "probes", "kind": "Probe"},
				"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}}}}}}
		inForce(t, "no-istio-crds", on, "no-istio-crds", func(o metav1.CreateOptions) error {
			_, err := ri.Create(context.Background(), crd, o)
			return err
		})
	}
	crdsRefused(true)
	out, code = precheckWritesNothing(t, c, x)
	if code != 1 || strings.Contains(out, "CRDs not asked") {
		t.Errorf("precheck with a policy on CRDs: exit %d, want 1 and the CRDs asked\n%s", code, out)
	}
	mustContain(t, "policy on CRDs", out, "✘ CustomResourceDefinition/gateways.networking.istio.io: refused by ValidatingAdmissionPolicy",
		"ValidatingAdmissionPolicy 'no-istio-crds' with binding 'no-istio-crds' denied request: no Istio CRDs here")
	kubectlIn(t, c, "delete", "default", noIstioCRDs)
	crdsRefused(false)

	// A webhook the apiserver cannot call for pods (no endpoint): a dry run cannot tell.
	const hook = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: unanswered}
webhooks:
- name: pods.unanswered.example.com
  admissionReviewVersions: [v1]
  sideEffects: NoneOnDryRun
  failurePolicy: Fail
  clientConfig: {service: {namespace: istio-system, name: nobody, port: 443}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: istio-system}}
`
	kubectlIn(t, c, "apply", "default", hook)
	defer kubectlIn(t, c, "delete", "default", hook)
	out, code = precheckWritesNothing(t, c, x)
	if code != 0 || strings.Contains(out, "✘") {
		t.Errorf("precheck with a webhook it cannot ask: exit %d, want 0 (a warning)\n%s", code, out)
	}
	mustContain(t, "webhook", out, "Pod of Deployment/istio-system/istiod: cannot check: ", `failed calling webhook "pods.unanswered.example.com"`)
}

// inForce waits until the apiserver refuses (on) or admits (off) try's dry run by a policy
// whose message holds mark: a ValidatingAdmissionPolicy takes effect, and goes, a moment
// after it is written.
func inForce(t *testing.T, what string, on bool, mark string, try func(metav1.CreateOptions) error) {
	t.Helper()
	harness.Eventually(t, time.Minute, fmt.Sprintf("%s in force: %v", what, on), func() (bool, string) {
		err := try(metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return (err != nil && strings.Contains(err.Error(), mark)) == on, fmt.Sprint(err)
	})
}

// sidecarsRequiredInForce waits until sidecarsRequired refuses (on) or no longer refuses
// a pod in ns.
func sidecarsRequiredInForce(t *testing.T, c *cluster.Cluster, ns string, on bool) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Labels: map[string]string{"sidecar.istio.io/inject": "false"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "probe"}}}}
	inForce(t, "sidecars-required in "+ns, on, "sidecars-required", func(o metav1.CreateOptions) error {
		_, err := c.Kube.CoreV1().Pods(ns).Create(context.Background(), pod, o)
		return err
	})
}

// admissionCause puts tc's cause into istio-system (which exists) and returns its undo.
func admissionCause(t *testing.T, c *cluster.Cluster, tc admissionCase) func() {
	t.Helper()
	if tc.label != "" {
		kv := strings.SplitN(tc.label, "=", 2)
		labelIstioNamespace(t, c, kv[0], kv[1])
		return func() { labelIstioNamespace(t, c, kv[0], "-") }
	}
	kubectlIn(t, c, "apply", "istio-system", tc.objects)
	if tc.objects == sidecarsRequired {
		sidecarsRequiredInForce(t, c, "istio-system", true)
		return func() {
			kubectlIn(t, c, "delete", "istio-system", tc.objects)
			sidecarsRequiredInForce(t, c, "istio-system", false)
		}
	}
	if strings.Contains(tc.objects, "ResourceQuota") {
		// Admission refuses pods as "status unknown" until the quota controller counts.
		harness.Eventually(t, time.Minute, "the quota is counted", func() (bool, string) {
			q, err := c.Kube.CoreV1().ResourceQuotas("istio-system").Get(context.Background(), "no-pods", metav1.GetOptions{})
			return err == nil && q.Status.Hard != nil, fmt.Sprint(err)
		})
	}
	return func() { kubectlIn(t, c, "delete", "istio-system", tc.objects) }
}

// TestAdmissionInstallFailsFastE2E: with each cause, install fails on the first pod
// admission refused, naming the workload and the cause, not at --readiness-timeout; with
// the cause removed, the same command completes. "Fast" is judged load-proof: the run
// failed on the refusal (its report names it, and no readiness timeout), and it ended
// before half its 5m readiness timeout had passed since the first refusal (a wait would
// have run that out).
func TestAdmissionInstallFailsFastE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	x := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}
	x.MustOutput("uninstall", "--purge", "-y")
	x.PurgeAtEnd()
	for _, tc := range admissionCases {
		t.Run(tc.name, func(t *testing.T) {
			noIstioNamespace(t, c)
			if _, err := c.Kube.CoreV1().Namespaces().Create(context.Background(), fixture.Namespace("istio-system"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			undo := admissionCause(t, c, tc)
			// Past the plan's admission check (TestAdmissionInstallPlanE2E), to the wait.
			const readinessTimeout = 5 * time.Minute
			args := []string{"install", "-y", "--set", "profile=" + tc.profile, "--readiness-timeout", readinessTimeout.String(), "--skip-admission-check"}
			out, err := x.Try(args...)
			ended := time.Now()
			if err == nil {
				undo()
				t.Fatalf("install succeeded despite the cause\n%s", out)
			}
			mustContain(t, tc.name, out, "failed: pods refused by ")
			for _, w := range tc.want[1:] {
				mustContain(t, tc.name, out, w)
			}
			if strings.Contains(out, "within the readiness timeout") {
				t.Errorf("the install waited out its readiness timeout instead of failing on the refusal\n%s", out)
			}
			first := firstRefusal(t, c)
			if first.IsZero() {
				t.Errorf("no FailedCreate event in istio-system\n%s", out)
			} else if d := ended.Sub(first); d > readinessTimeout/2 {
				t.Errorf("install ended %s after the first refused pod, want it on the refusal, well before its %v readiness timeout\n%s", d.Round(time.Second), readinessTimeout, out)
			} else {
				t.Logf("install ended %s after the first refused pod", d.Round(time.Second))
			}
			undo()
			x.MustOutput(args...)
			x.MustOutput("uninstall", "--purge", "-y")
		})
	}
}

// firstRefusal is when a pod was first refused in istio-system (a FailedCreate event).
func firstRefusal(t *testing.T, c *cluster.Cluster) time.Time {
	t.Helper()
	evs, err := c.Kube.CoreV1().Events("istio-system").List(context.Background(), metav1.ListOptions{FieldSelector: "reason=FailedCreate"})
	if err != nil {
		t.Fatal(err)
	}
	var first time.Time
	for _, e := range evs.Items {
		at := e.FirstTimestamp.Time
		if at.IsZero() {
			at = e.EventTime.Time
		}
		if at.IsZero() {
			at = e.CreationTimestamp.Time
		}
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	return first
}

// missingSecret points istiod's env at a Secret nobody creates (--set).
var missingSecret = []string{
	"--set", "components.pilot.k8s.env[0].name=VAULT_TOKEN",
	"--set", "components.pilot.k8s.env[0].valueFrom.secretKeyRef.name=vault-token",
	"--set", "components.pilot.k8s.env[0].valueFrom.secretKeyRef.key=token",
}

// installRefused runs install at a terminal that would answer y, and fails the test unless
// the plan refused it before the prompt, writing nothing; it returns the output.
func installRefused(t *testing.T, c *cluster.Cluster, args ...string) string {
	t.Helper()
	var out, errOut string
	var err error
	writesNothing(t, c, "install", args, func() {
		out, errOut, err = harness.Asking(t, "y\n", append([]string{"--kubeconfig", c.Kubeconfig, "install"}, args...)...)
	})
	out += errOut
	if err == nil || isUsage(err) || strings.Contains(out, "Proceed?") {
		t.Errorf("install %v: %v, want refused before the prompt\n%s", args, err, out)
	}
	return out + fmt.Sprint(err)
}

// planAdmits runs install without a terminal: a plan that passes ends at the prompt it
// cannot ask, a usage error, having written nothing.
func planAdmits(t *testing.T, c *cluster.Cluster, args ...string) {
	t.Helper()
	writesNothing(t, c, "install", args, func() {
		_, errOut, err := harness.Run(t, append([]string{"--kubeconfig", c.Kubeconfig, "install"}, args...)...)
		if !isUsage(err) {
			t.Errorf("install %v without a terminal: %v, want the plan to pass (a usage error at the prompt)\n%s", args, err, errOut)
		}
	})
}

// TestAdmissionInstallPlanE2E: install's plan runs precheck's admission checks before its
// prompt: each cause is named as precheck names it, the install stops with a non-zero exit
// before asking, and nothing is written (with -y too, where the plan is made under the
// cluster lock), with istio-system absent and present. A workload pointed at a Secret
// nobody creates is found from the plan, named with its field path, by install and
// precheck alike. With each cause removed the plan passes.
func TestAdmissionInstallPlanE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	x := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}
	x.MustOutput("uninstall", "--purge", "-y")
	noIstioNamespace(t, c)

	kubectlIn(t, c, "apply", "default", sidecarsRequired)
	sidecarsRequiredInForce(t, c, "default", true)
	out := installRefused(t, c, "--set", "profile=default")
	mustContain(t, "policy, istio-system absent", out, append(admissionCases[4].want,
		"the cluster would refuse, or not run, what this install creates", "Nothing was written")...)
	kubectlIn(t, c, "delete", "default", sidecarsRequired)
	sidecarsRequiredInForce(t, c, "default", false)
	planAdmits(t, c, "--set", "profile=default")

	// A missing Secret, istio-system absent: the Secret cannot exist yet either.
	const needs = "Deployment/istio-system/istiod: needs Secret/istio-system/vault-token (spec.template.spec.containers[0].env["
	out = installRefused(t, c, missingSecret...)
	mustContain(t, "missing secret", out, needs, "].valueFrom.secretKeyRef.name), which neither the cluster nor the install has",
		"create Secret vault-token in namespace istio-system before installing")
	if strings.Contains(out, "istio-ca-root-cert") {
		t.Errorf("the ConfigMap istiod publishes is reported missing:\n%s", out)
	}

	if _, err := c.Kube.CoreV1().Namespaces().Create(context.Background(), fixture.Namespace("istio-system"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pc, code := precheckWritesNothing(t, c, x, missingSecret...)
	if code != 1 {
		t.Errorf("precheck with a missing Secret: exit %d, want 1\n%s", code, pc)
	}
	mustContain(t, "precheck, missing secret", pc, "✘ "+needs)
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: vault-token}\nstringData: {token: x}\n"
	kubectlIn(t, c, "apply", "istio-system", secret)
	planAdmits(t, c, missingSecret...)
	kubectlIn(t, c, "delete", "istio-system", secret)

	for i, tc := range admissionCases {
		t.Run(tc.name, func(t *testing.T) {
			undo := admissionCause(t, c, tc)
			args := []string{"--set", "profile=" + tc.profile}
			if i == 0 {
				args = append(args, "-y") // planned under the cluster lock
			}
			out := installRefused(t, c, args...)
			mustContain(t, tc.name, out, tc.want...)
			undo()
			planAdmits(t, c, "--set", "profile="+tc.profile)
		})
	}
}
