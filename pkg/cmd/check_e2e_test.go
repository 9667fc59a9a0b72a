package cmd_test

import (
	"context"
	"encoding/xml"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/istioctl-installer/istioctl/operator/skew"
	"github.com/istioctl-installer/istioctl/pkg/cmd"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

var clusterIP = regexp.MustCompile(`127\.(6[4-9]|[7-9][0-9])\.\d+\.\d+`) // the clusters' service ranges (hack/kube/up.sh)

// normalize masks what differs between runs (cluster IPs, the Kubernetes patch version).
// podName matches a ReplicaSet's pod (name-<template hash>-xxxxx): the suffix is random and
// the template hash moves with every chart or version change, so both are masked.
var podName = regexp.MustCompile(`\b(pod [a-z0-9-]+)-[a-z0-9]{8,10}-[a-z0-9]{5}\b`)

func normalize(s string) string {
	return podName.ReplaceAllString(clusterIP.ReplaceAllString(s, "CLUSTER-IP"), "$1-HASH-XXXXX")
}

func exitCode(err error) int {
	var e *cmd.ExitError
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestVerifyAndPrecheckE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Chdir("../..")
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	k := []string{"--kubeconfig", c.Kubeconfig}
	ist := func(args ...string) (string, error) {
		out, _, err := harness.Run(t, append(k, args...)...)
		return out, err
	}
	// Start from a cluster without Istio (a run stopped half-way may have left one).
	if out, err := ist("uninstall", "--purge", "-y"); err != nil {
		t.Fatalf("purge: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = ist("uninstall", "-r", "default", "-y") })
	// The namespace may exist or not depending on earlier tests; the reports must not.
	_, _ = c.Kube.CoreV1().Namespaces().Create(ctx, fixture.Namespace("istio-system"), metav1.CreateOptions{})

	// A fresh-enough cluster passes precheck; its reports are kept as golden files. A
	// Kubernetes outside this release's window is a note, in every format, failing nothing.
	info, err := c.Kube.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	window := skew.Kubernetes(version.Version, info.GitVersion)
	for _, f := range []string{"text", "json", "junit"} {
		out, err := ist("x", "precheck", "-o", f)
		if err != nil {
			t.Fatalf("precheck -o %s: %v\n%s", f, err, out)
		}
		golden.Check(t, "testdata/check/precheck-fresh."+f, []byte(normalize(out)))
		if f == "junit" {
			tests, failures := junitCounts(t, out)
			// A test per check and object, permissions one per resource kind.
			if failures != 0 || tests < 20 {
				t.Errorf("precheck JUnit: %d tests, %d failures", tests, failures)
			}
		}
		if f == "text" && !strings.Contains(out, "Istio is safe to install or upgrade") {
			t.Errorf("precheck output:\n%s", out)
		}
		if note := map[string]string{"text": "i (Cluster): ", "json": `"message": "`, "junit": "<system-out>note: "}[f] + window.String(); !window.OK && !strings.Contains(out, note) {
			t.Errorf("precheck -o %s does not note the Kubernetes window (%s):\n%s", f, note, out)
		}
		// A clean precheck is short: a line per section, the counts and the verdict.
		if n := strings.Count(out, "\n"); f == "text" && n > 15 {
			t.Errorf("a clean precheck prints %d lines, want at most 15:\n%s", n, out)
		}
	}
	var out string

	if out, err := ist("install", "-y"); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	out, err = ist("verify-install", "--set", "profile=default")
	if err != nil {
		t.Fatalf("verify-install after install: %v\n%s", err, out)
	}
	// istiod has written its webhooks' CA bundles: not even a warning.
	if !strings.Contains(out, "39 objects checked, 0 failed (0 errors, 0 warnings)") || !strings.Contains(out, "istio-sidecar-injector: every webhook has a CA bundle") {
		t.Errorf("verify-install summary:\n%s", out)
	}
	// Without a spec: the revision's objects, found by their labels.
	if out, err := ist("verify-install"); err != nil {
		t.Errorf("verify-install from labels: %v\n%s", err, out)
	}

	// Break it four ways.
	if err := c.Kube.AppsV1().Deployments("istio-system").Delete(ctx, "istiod", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"spec":{"template":{"spec":{"nodeSelector":{"no-such-node":"x"}}}}}`)
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Patch(ctx, "istio-ingressgateway", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := []byte(`{"data":{"mesh":"accessLogFile: /dev/stdout\n"}}`)
	if _, err := c.Kube.CoreV1().ConfigMaps("istio-system").Patch(ctx, "istio", types.MergePatchType, cm, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if err := c.Dynamic.Resource(crds).Delete(ctx, "wasmplugins.extensions.istio.io", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "the WasmPlugin CRD gone", func() (bool, string) {
		_, err := c.Dynamic.Resource(crds).Get(ctx, "wasmplugins.extensions.istio.io", metav1.GetOptions{})
		return err != nil, ""
	})
	harness.Eventually(t, 30*time.Second, "the new ReplicaSet's pod unscheduled", func() (bool, string) { // the new ReplicaSet's pod cannot be scheduled
		d, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istio-ingressgateway", metav1.GetOptions{})
		return err == nil && d.Status.ObservedGeneration == d.Generation && d.Status.Replicas > d.Status.UpdatedReplicas, ""
	})

	for _, f := range []string{"text", "json", "junit"} {
		out, err := ist("verify-install", "--set", "profile=default", "-o", f)
		if exitCode(err) != 1 {
			t.Fatalf("verify-install -o %s of a broken install: err = %v", f, err)
		}
		golden.Check(t, "testdata/check/verify-broken."+f, []byte(normalize(out)))
		if f == "text" {
			first := strings.Index(out, "✘")
			if first < 0 || !strings.HasPrefix(out[first:], "✘ Deployment/istio-system/istiod: missing") {
				t.Errorf("the missing istiod must be the first failure:\n%s", out)
			}
			for _, want := range []string{"CustomResourceDefinition/wasmplugins.extensions.istio.io: missing",
				"Deployment/istio-system/istio-ingressgateway: not ready", "+accessLogFile: /dev/stdout"} {
				if !strings.Contains(out, want) {
					t.Errorf("report lacks %q", want)
				}
			}
		}
		if f == "junit" {
			var suites struct {
				Tests    int `xml:"tests,attr"`
				Failures int `xml:"failures,attr"`
				Suites   []struct {
					Name  string `xml:"name,attr"`
					Cases []struct {
						Name    string    `xml:"name,attr"`
						Failure *struct{} `xml:"failure"`
					} `xml:"testcase"`
				} `xml:"testsuite"`
			}
			if err := xml.Unmarshal([]byte(out), &suites); err != nil {
				t.Fatalf("JUnit does not parse: %v", err)
			}
			failures, cases := 0, 0
			for _, s := range suites.Suites {
				for _, c := range s.Cases {
					cases++
					if c.Failure != nil {
						failures++
					}
				}
			}
			if cases != suites.Tests || failures != suites.Failures || failures < 5 {
				t.Errorf("JUnit counts: tests=%d failures=%d, counted %d cases %d failures", suites.Tests, suites.Failures, cases, failures)
			}
		}
	}

	// Repair: the nodeSelector was set by another field manager, so install leaves it (as
	// server-side apply must); take it out by hand, then install puts back the rest.
	unpatch := []byte(`{"spec":{"template":{"spec":{"nodeSelector":null}}}}`)
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Patch(ctx, "istio-ingressgateway", types.StrategicMergePatchType, unpatch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, err := ist("install", "-y", "--readiness-timeout", "1m"); err != nil {
		t.Fatalf("repairing install: %v\n%s", err, out)
	}
	if out, err := ist("verify-install", "--set", "profile=default"); err != nil {
		t.Errorf("verify-install after the repair: %v\n%s", err, out)
	}
}

// junitCounts parses a JUnit report and checks its totals against its test cases.
func junitCounts(t *testing.T, out string) (tests, failures int) {
	t.Helper()
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &suites); err != nil {
		t.Fatalf("JUnit does not parse: %v", err)
	}
	for _, s := range suites.Suites {
		for _, c := range s.Cases {
			tests++
			if c.Failure != nil {
				failures++
			}
		}
	}
	if tests != suites.Tests || failures != suites.Failures {
		t.Errorf("JUnit totals %d/%d differ from its %d cases, %d failures", suites.Tests, suites.Failures, tests, failures)
	}
	return tests, failures
}

// TestPrecheckRestrictedUser: a user bound to a narrow Role gets one IST0141 per missing
// permission and nothing else fails.
func TestPrecheckRestrictedUser(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	ns := c.Namespace(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "installer", Namespace: ns}}
	if _, err := c.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// May do everything with ConfigMaps and ServiceAccounts in istio-system, nothing else.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "narrow-" + ns, Namespace: "istio-system"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps", "serviceaccounts"}, Verbs: []string{"*"}}}}
	_, _ = c.Kube.CoreV1().Namespaces().Create(ctx, fixture.Namespace("istio-system"), metav1.CreateOptions{})
	if _, err := c.Kube.RbacV1().Roles("istio-system").Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.RbacV1().Roles("istio-system").Delete(context.Background(), role.Name, metav1.DeleteOptions{})
	})
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: "istio-system"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "installer", Namespace: ns}}}
	if _, err := c.Kube.RbacV1().RoleBindings("istio-system").Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.RbacV1().RoleBindings("istio-system").Delete(context.Background(), rb.Name, metav1.DeleteOptions{})
	})
	// The user also needs to ask the apiserver what it may do and read the cluster's state.
	cr := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "view-" + ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "installer", Namespace: ns}}}
	if _, err := c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), cr.Name, metav1.DeleteOptions{})
	})

	// Check what that user is really denied, to compare with precheck's report.
	user := "system:serviceaccount:" + ns + ":installer"
	harness.Authorized(t, c, user, authv1.ResourceAttributes{Verb: "create", Resource: "configmaps", Namespace: "istio-system"},
		authv1.ResourceAttributes{Verb: "list", Resource: "pods"})
	impersonated := rest.CopyConfig(c.Config)
	impersonated.Impersonate = rest.ImpersonationConfig{UserName: user}
	uc := kubernetes.NewForConfigOrDie(impersonated)
	denied := func(verb, group, resource, namespace string) bool {
		r, err := uc.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource, Namespace: namespace}}}, metav1.CreateOptions{})
		return err == nil && !r.Status.Allowed
	}
	if denied("create", "", "configmaps", "istio-system") || !denied("create", "apps", "deployments", "istio-system") {
		t.Fatal("the test's RBAC is not what it means to be")
	}

	out, _, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "--as", user, "x", "precheck", "-o", "json")
	if exitCode(err) != 1 {
		t.Fatalf("precheck as a restricted user: err = %v\n%s", err, out)
	}
	var rep struct {
		Results []struct {
			Check, Code, Object, Message, Severity string
			Passed                                 bool
		}
	}
	if err := jsonUnmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	missing := 0
	for _, r := range rep.Results {
		if r.Passed || r.Severity == "info" || r.Severity == "warning" && strings.HasPrefix(r.Message, "cannot check") {
			continue // what it could not ask is a warning, not a finding; a note is neither
		}
		if r.Check != "permissions" || r.Code != "IST0141" {
			t.Errorf("a failure other than a missing permission: %+v", r)
			continue
		}
		missing++
		// Each reported permission is really denied.
		var verb, what string
		if _, err := fmtSscanf(r.Message, "Missing required permission to %s resource %s", &verb, &what); err != nil {
			t.Errorf("message %q", r.Message)
			continue
		}
		resource, group, _ := strings.Cut(what, ".")
		namespace := strings.TrimPrefix(r.Object, "Namespace/")
		if r.Object == "(Cluster)" {
			namespace = ""
		}
		if !denied(verb, group, resource, namespace) {
			t.Errorf("reported missing but allowed: %s", r.Message)
		}
	}
	if missing == 0 {
		t.Error("no missing permission reported")
	}
	for _, allowed := range []string{"create resource configmaps", "create resource serviceaccounts"} {
		for _, r := range rep.Results {
			if !r.Passed && strings.Contains(r.Message, allowed) && r.Object == "Namespace/istio-system" {
				t.Errorf("reported a permission the user has: %s", r.Message)
			}
		}
	}
}
