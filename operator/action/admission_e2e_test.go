package action_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

// The ValidatingAdmissionPolicy of the admission tests: in-tree CEL admission that denies
// a field the charts set (istiod's and the gateways' pods opt out of sidecar injection).
const admSidecarsRequired = `apiVersion: admissionregistration.k8s.io/v1
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
type admCase struct {
	name, profile string
	objects       string
	// label is set on istio-system instead of applying objects.
	label string
	want  []string
}

var admCases = []admCase{
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
	{name: "validating admission policy", profile: "default", objects: admSidecarsRequired,
		want: []string{"Pod of Deployment/istio-system/istiod: refused by ValidatingAdmissionPolicy",
			"ValidatingAdmissionPolicy 'sidecars-required' with binding 'sidecars-required' denied request: pods must not opt out of sidecar injection"}},
}

// admApply applies or deletes (waiting until gone) the objects of yaml, in namespace ns
// unless they are cluster-scoped.
func admApply(t *testing.T, c *cluster.Cluster, verb, ns, docs string) {
	t.Helper()
	client := harness.Client(t, c)
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
		harness.Eventually(t, time.Minute, ref.Of(o).String()+" is gone", func() (bool, string) {
			live, err := client.Get(ctx, o)
			return err == nil && live == nil, fmt.Sprint(err)
		})
	}
}

// admLabel sets (value "") or removes (value "-") a label of istio-system.
func admLabel(t *testing.T, c *cluster.Cluster, key, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
	if value == "-" {
		patch = fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, key)
	}
	if _, err := c.Kube.CoreV1().Namespaces().Patch(context.Background(), "istio-system", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// admNoIstioNamespace removes istio-system and waits until it is gone.
func admNoIstioNamespace(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	_ = c.Kube.CoreV1().Namespaces().Delete(ctx, "istio-system", metav1.DeleteOptions{})
	harness.Eventually(t, 2*time.Minute, "istio-system is gone", func() (bool, string) {
		_, err := c.Kube.CoreV1().Namespaces().Get(ctx, "istio-system", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// admPrecheck runs precheck with sets and fails the test if it wrote anything (audit log
// and every object's content); it returns the report as lines and whether it failed.
func admPrecheck(t *testing.T, c *cluster.Cluster, sets ...string) (string, bool) {
	t.Helper()
	p := action.Precheck(config(c))
	p.Spec.Sets = sets
	var res *action.CheckResult
	var err error
	admWritesNothing(t, c, "precheck", sets, func() { res, err = p.Run(context.Background()) })
	if err != nil {
		t.Fatalf("precheck %v: %v", sets, err)
	}
	return admText(res.Report), res.Failed
}

// admText is a report as lines, section by section: a mark (✔ passed, ✘ failed at error,
// i a note, ! a warning), the code of a failure, the object and the message, then a
// failure's hint.
func admText(rep *check.Report) string {
	var sections []string
	by := map[string][]check.Result{}
	for _, r := range rep.Results {
		if _, ok := by[r.Section]; !ok {
			sections = append(sections, r.Section)
		}
		by[r.Section] = append(by[r.Section], r)
	}
	var b strings.Builder
	for _, sec := range sections {
		fmt.Fprintf(&b, "%s\n%s\n", sec, strings.Repeat("-", utf8.RuneCountInString(sec)))
		for _, r := range by[sec] {
			mark, code := "!", ""
			switch {
			case r.Passed:
				mark = "✔"
			case r.Severity == check.Error:
				mark, code = "✘", "["+r.Code+"] "
			case r.Note():
				mark = "i"
			}
			if code == "[] " {
				code = ""
			}
			fmt.Fprintf(&b, "%s %s%s: %s\n", mark, code, r.Object, r.Message)
			if r.Hint != "" && !r.Passed {
				fmt.Fprintf(&b, "    hint: %s\n", r.Hint)
			}
		}
	}
	return b.String()
}

// admWritesNothing runs fn and fails the test if the action it runs (what, args) wrote
// anything: the audit log's writes (the cluster lock's Lease left out) and every object's
// resourceVersion.
func admWritesNothing(t *testing.T, c *cluster.Cluster, what string, args []string, fn func()) {
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
	c := purged(t)
	admNoIstioNamespace(t, c)

	out, failed := admPrecheck(t, c)
	if failed || strings.Contains(out, "✘") || !strings.Contains(out, "Namespace/istio-system: admitted (does not exist yet: the install creates it)") {
		t.Errorf("precheck of a clean cluster without istio-system: failed %v\n%s", failed, out)
	}
	if _, err := c.Kube.CoreV1().Namespaces().Get(context.Background(), "istio-system", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("precheck created istio-system (%v)", err)
	}
	admApply(t, c, "apply", "default", admSidecarsRequired)
	admSidecarsInForce(t, c, "default", true)
	out, failed = admPrecheck(t, c)
	if !failed {
		t.Errorf("precheck with the policy, istio-system absent passed\n%s", out)
	}
	mustContain(t, "policy, istio-system absent", out, append(admCases[4].want,
		"policies and webhooks asked in namespace default, as ServiceAccount default: namespace istio-system does not exist yet")...)
	admApply(t, c, "delete", "default", admSidecarsRequired)
	admSidecarsInForce(t, c, "default", false)

	if _, err := c.Kube.CoreV1().Namespaces().Create(context.Background(), fixture.Namespace("istio-system"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, failed = admPrecheck(t, c)
	if failed || strings.Contains(out, "✘") || !strings.Contains(out, "Admission\n---------\n✔ (Cluster): admits ") {
		t.Errorf("precheck of a clean cluster with istio-system: failed %v\n%s", failed, out)
	}
	for _, tc := range admCases {
		t.Run(tc.name, func(t *testing.T) {
			undo := admCause(t, c, tc)
			defer undo()
			out, failed := admPrecheck(t, c, "profile="+tc.profile)
			if !failed {
				t.Errorf("precheck passed\n%s", out)
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
	admApply(t, c, "apply", "default", noIstioCRDs)
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
		admInForce(t, "no-istio-crds", on, "no-istio-crds", func(o metav1.CreateOptions) error {
			_, err := ri.Create(context.Background(), crd, o)
			return err
		})
	}
	crdsRefused(true)
	out, failed = admPrecheck(t, c)
	if !failed || strings.Contains(out, "CRDs not asked") {
		t.Errorf("precheck with a policy on CRDs: failed %v, want failed and the CRDs asked\n%s", failed, out)
	}
	mustContain(t, "policy on CRDs", out, "✘ CustomResourceDefinition/gateways.networking.istio.io: refused by ValidatingAdmissionPolicy",
		"ValidatingAdmissionPolicy 'no-istio-crds' with binding 'no-istio-crds' denied request: no Istio CRDs here")
	admApply(t, c, "delete", "default", noIstioCRDs)
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
	admApply(t, c, "apply", "default", hook)
	defer admApply(t, c, "delete", "default", hook)
	out, failed = admPrecheck(t, c)
	if failed || strings.Contains(out, "✘") {
		t.Errorf("precheck with a webhook it cannot ask failed, want a warning\n%s", out)
	}
	mustContain(t, "webhook", out, "Pod of Deployment/istio-system/istiod: cannot check: ", `failed calling webhook "pods.unanswered.example.com"`)
}

// admInForce waits until the apiserver refuses (on) or admits (off) try's dry run by a policy
// whose message holds mark: a ValidatingAdmissionPolicy takes effect, and goes, a moment
// after it is written.
func admInForce(t *testing.T, what string, on bool, mark string, try func(metav1.CreateOptions) error) {
	t.Helper()
	harness.Eventually(t, time.Minute, fmt.Sprintf("%s in force: %v", what, on), func() (bool, string) {
		err := try(metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return (err != nil && strings.Contains(err.Error(), mark)) == on, fmt.Sprint(err)
	})
}

// admSidecarsInForce waits until admSidecarsRequired refuses (on) or no longer refuses
// a pod in ns.
func admSidecarsInForce(t *testing.T, c *cluster.Cluster, ns string, on bool) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Labels: map[string]string{"sidecar.istio.io/inject": "false"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "probe"}}}}
	admInForce(t, "sidecars-required in "+ns, on, "sidecars-required", func(o metav1.CreateOptions) error {
		_, err := c.Kube.CoreV1().Pods(ns).Create(context.Background(), pod, o)
		return err
	})
}

// admCause puts tc's cause into istio-system (which exists) and returns its undo.
func admCause(t *testing.T, c *cluster.Cluster, tc admCase) func() {
	t.Helper()
	if tc.label != "" {
		kv := strings.SplitN(tc.label, "=", 2)
		admLabel(t, c, kv[0], kv[1])
		return func() { admLabel(t, c, kv[0], "-") }
	}
	admApply(t, c, "apply", "istio-system", tc.objects)
	if tc.objects == admSidecarsRequired {
		admSidecarsInForce(t, c, "istio-system", true)
		return func() {
			admApply(t, c, "delete", "istio-system", tc.objects)
			admSidecarsInForce(t, c, "istio-system", false)
		}
	}
	if strings.Contains(tc.objects, "ResourceQuota") {
		// Admission refuses pods as "status unknown" until the quota controller counts.
		harness.Eventually(t, time.Minute, "the quota is counted", func() (bool, string) {
			q, err := c.Kube.CoreV1().ResourceQuotas("istio-system").Get(context.Background(), "no-pods", metav1.GetOptions{})
			return err == nil && q.Status.Hard != nil, fmt.Sprint(err)
		})
	}
	return func() { admApply(t, c, "delete", "istio-system", tc.objects) }
}

// TestAdmissionInstallFailsFastE2E: with each cause, install fails on the first pod
// admission refused, naming the workload and the cause, not at its readiness timeout; with
// the cause removed, the same install completes. "Fast" is judged load-proof: the run
// failed on the refusal (its report names it, and no readiness timeout), and it ended
// before half its 5m readiness timeout had passed since the first refusal (a wait would
// have run that out).
func TestAdmissionInstallFailsFastE2E(t *testing.T) {
	c := purged(t)
	ctx := context.Background()
	for _, tc := range admCases {
		t.Run(tc.name, func(t *testing.T) {
			admNoIstioNamespace(t, c)
			if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, fixture.Namespace("istio-system"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			undo := admCause(t, c, tc)
			// Past the plan's admission check (TestAdmissionInstallPlanE2E), to the wait.
			const readinessTimeout = 5 * time.Minute
			rec := &event.Recorder{}
			in := &action.Install{Config: config(c), Spec: spec.Options{Sets: []string{"profile=" + tc.profile}}, ReadinessTimeout: readinessTimeout,
				SkipAdmissionCheck: true, Events: rec}
			_, err := in.Run(ctx, nil)
			ended := time.Now()
			if err == nil {
				undo()
				t.Fatalf("install succeeded despite the cause")
			}
			var failed []string
			for _, e := range rec.Of(event.ComponentFailed) {
				failed = append(failed, e.Error)
			}
			out := strings.Join(failed, "\n") + "\n" + err.Error()
			mustContain(t, tc.name, strings.Join(failed, "\n"), "pods refused by ")
			mustContain(t, tc.name, out, tc.want[1:]...)
			if strings.Contains(out, "within the readiness timeout") {
				t.Errorf("the install waited out its readiness timeout instead of failing on the refusal\n%s", out)
			}
			first := admFirstRefusal(t, c)
			if first.IsZero() {
				t.Errorf("no FailedCreate event in istio-system\n%s", out)
			} else if d := ended.Sub(first); d > readinessTimeout/2 {
				t.Errorf("install ended %s after the first refused pod, want it on the refusal, well before its %v readiness timeout\n%s", d.Round(time.Second), readinessTimeout, out)
			} else {
				t.Logf("install ended %s after the first refused pod", d.Round(time.Second))
			}
			undo()
			in.Events = nil
			if _, err := in.Run(ctx, nil); err != nil {
				t.Fatalf("install with the cause removed: %v", err)
			}
			if _, err := (&action.Uninstall{Config: config(c), Purge: true, Timeout: 2 * time.Minute}).Run(ctx, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// admFirstRefusal is when a pod was first refused in istio-system (a FailedCreate event).
func admFirstRefusal(t *testing.T, c *cluster.Cluster) time.Time {
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

// admMissingSecret points istiod's env at a Secret nobody creates (sets).
var admMissingSecret = []string{
	"components.pilot.k8s.env[0].name=VAULT_TOKEN",
	"components.pilot.k8s.env[0].valueFrom.secretKeyRef.name=vault-token",
	"components.pilot.k8s.env[0].valueFrom.secretKeyRef.key=token",
}

// admRefused plans an install of sets as a command that asks first would (underLock: as
// one with -y, which plans under the cluster lock), and fails the test unless the plan
// refused it, writing nothing; it returns what the refusal said.
func admRefused(t *testing.T, c *cluster.Cluster, underLock bool, sets ...string) string {
	t.Helper()
	in := &action.Install{Config: config(c), Spec: spec.Options{Sets: sets}, ReadinessTimeout: 2 * time.Minute, Replan: !underLock}
	var err error
	admWritesNothing(t, c, "install", sets, func() {
		if underLock {
			_, err = in.Run(context.Background(), nil)
		} else {
			_, err = in.Plan(context.Background())
		}
	})
	if err == nil || event.ExitCode(err) == event.ExitUsage {
		t.Errorf("install %v: %v, want refused by its plan", sets, err)
	}
	// The error names each cause; the hints are the results' data, worded by the printer.
	out := fmt.Sprint(err)
	var blocked *check.Blocked
	if errors.As(err, &blocked) {
		for _, r := range blocked.Results {
			out += "\nhint: " + r.Hint
		}
	}
	return out
}

// admAdmits fails the test unless an install's plan of sets passes, having written nothing.
func admAdmits(t *testing.T, c *cluster.Cluster, sets ...string) {
	t.Helper()
	admWritesNothing(t, c, "install", sets, func() {
		in := &action.Install{Config: config(c), Spec: spec.Options{Sets: sets}, Replan: true}
		if _, err := in.Plan(context.Background()); err != nil {
			t.Errorf("install %v: the plan refused: %v", sets, err)
		}
	})
}

// TestAdmissionInstallPlanE2E: install's plan runs precheck's admission checks before its
// prompt: each cause is named as precheck names it, the plan fails, and nothing is written
// (as with -y too, where the plan is made under the cluster lock), with istio-system absent and present. A workload pointed at a Secret
// nobody creates is found from the plan, named with its field path, by install and
// precheck alike. With each cause removed the plan passes.
func TestAdmissionInstallPlanE2E(t *testing.T) {
	c := purged(t)
	admNoIstioNamespace(t, c)

	admApply(t, c, "apply", "default", admSidecarsRequired)
	admSidecarsInForce(t, c, "default", true)
	out := admRefused(t, c, false, "profile=default")
	mustContain(t, "policy, istio-system absent", out, append(admCases[4].want,
		"the cluster would refuse, or not run, what this install creates", "Nothing was written")...)
	admApply(t, c, "delete", "default", admSidecarsRequired)
	admSidecarsInForce(t, c, "default", false)
	admAdmits(t, c, "profile=default")

	// A missing Secret, istio-system absent: the Secret cannot exist yet either.
	const needs = "Deployment/istio-system/istiod: needs Secret/istio-system/vault-token (spec.template.spec.containers[0].env["
	out = admRefused(t, c, false, admMissingSecret...)
	mustContain(t, "missing secret", out, needs, "].valueFrom.secretKeyRef.name), which neither the cluster nor the install has",
		"create Secret vault-token in namespace istio-system before installing")
	if strings.Contains(out, "istio-ca-root-cert") {
		t.Errorf("the ConfigMap istiod publishes is reported missing:\n%s", out)
	}

	if _, err := c.Kube.CoreV1().Namespaces().Create(context.Background(), fixture.Namespace("istio-system"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pc, failed := admPrecheck(t, c, admMissingSecret...)
	if !failed {
		t.Errorf("precheck with a missing Secret passed\n%s", pc)
	}
	mustContain(t, "precheck, missing secret", pc, "✘ "+needs)
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: vault-token}\nstringData: {token: x}\n"
	admApply(t, c, "apply", "istio-system", secret)
	admAdmits(t, c, admMissingSecret...)
	admApply(t, c, "delete", "istio-system", secret)

	for i, tc := range admCases {
		t.Run(tc.name, func(t *testing.T) {
			undo := admCause(t, c, tc)
			out := admRefused(t, c, i == 0, "profile="+tc.profile) // the first under the cluster lock
			mustContain(t, tc.name, out, tc.want...)
			undo()
			admAdmits(t, c, "profile="+tc.profile)
		})
	}
}
