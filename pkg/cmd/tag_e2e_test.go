package cmd_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/cmd"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

func ptr[T any](v T) *T { return &v }

// TestTagCommandLine: the tag commands' usage errors, before any cluster is asked
// (operator/action's TestTagE2E proves what the tag actions refuse); show and delete are
// list's and remove's aliases.
func TestTagCommandLine(t *testing.T) {
	offline(t)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"tag", "set", "prod"}, "--revision is required"},
		{[]string{"tag", "set", "a", "b", "--revision", "canary"}, "single tag"},
		{[]string{"tag", "list", "-o", "xml"}, "--output"},
		{[]string{"tag", "list", "-o", "custom-columns=TAG"}, "HEADER:PATH"},
		{[]string{"tag", "show", "-o", "xml"}, "--output"},
		{[]string{"tag", "delete"}, "must provide a tag for removal"},
	} {
		_, _, err := harness.Run(t, tc.args...)
		var usage *cmd.UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("istioctl %s: %v, want a usage error saying %q", strings.Join(tc.args, " "), err, tc.msg)
		}
	}
}

// tagInjector creates an injector of revision rev in ns that injects the namespaces
// labelled istio.io/rev=selects (as istiod's webhooks look to the tag commands) and
// deletes it at the end.
func tagInjector(t *testing.T, c *cluster.Cluster, name, rev, ns, selects string) {
	t.Helper()
	w := &admissionv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"istio.io/rev": rev}},
		Webhooks: []admissionv1.MutatingWebhook{{
			Name: "rev.sidecar-injector.istio.io", AdmissionReviewVersions: []string{"v1"},
			ClientConfig:      admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: ns, Name: "istiod-" + rev}},
			SideEffects:       ptr(admissionv1.SideEffectClassNone),
			FailurePolicy:     ptr(admissionv1.Ignore),
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"istio.io/rev": selects}},
		}},
	}
	if rev == "" {
		w.Labels = nil
	}
	if _, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(context.Background(), w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tagDelete(c, name) })
}

// tagWroteNothing fails when the apiserver counted a write since before.
func tagWroteNothing(t *testing.T, c *cluster.Cluster, what string, before map[string]float64) {
	t.Helper()
	if w := harness.WritesBetween(before, harness.AuditWrites(t, c)); len(w) > 0 {
		t.Errorf("%s refused and cancelled wrote: %v", what, w)
	}
}

func tagDelete(c *cluster.Cluster, name string) {
	_ = c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
}

// TestTagPromptsE2E: tag set over another injector and tag remove of a used tag ask first:
// without -y off a terminal a usage error (tag set names the overlap); at a terminal the
// plan of what would change, and answered n, exit 1 and nothing written. Two revisions'
// injectors stand in for installs: the prompts need no istiod.
func TestTagPromptsE2E(t *testing.T) {
	c := cluster.Get(t)
	ns, app := c.Namespace(t), c.Namespace(t)
	t.Setenv("HOME", t.TempDir())
	const name = "tprompt"
	k := []string{"--kubeconfig", c.Kubeconfig, "-i", ns}
	hook := "istio-revision-tag-" + name + "-" + ns // outside istio-system, the tag's webhook names its namespace
	tagInjector(t, c, "tprompt-injector-a", "tpa", ns, "tpa")
	tagInjector(t, c, "tprompt-injector-b", "tpb", ns, "tpb")
	if out, stderr, err := harness.Run(t, append(k, "tag", "set", name, "--revision", "tpa")...); err != nil {
		t.Fatalf("tag set: %v\n%s\n%s", err, out, stderr)
	}
	t.Cleanup(func() { tagDelete(c, hook) })
	patch := fmt.Sprintf(`{"metadata":{"labels":{"istio.io/rev":%q}}}`, name)
	if _, err := c.Kube.CoreV1().Namespaces().Patch(context.Background(), app, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	tagInjector(t, c, "tprompt-rogue", "", ns, name)

	harness.Settled(t, c) // the new namespaces filled: AuditWrites counts only what the commands write
	before := harness.AuditWrites(t, c)
	set := append(k, "tag", "set", name, "--revision", "tpb", "--overwrite")
	_, stderr, err := harness.Run(t, set...)
	if !isUsage(err) || !strings.Contains(stderr, "Error [IST0139] (MutatingWebhookConfiguration "+hook+")") ||
		!strings.Contains(stderr, "tprompt-rogue/rev.sidecar-injector.istio.io") {
		t.Errorf("an overlapping tag without -y and without a terminal: %v\n%s", err, stderr)
	}
	out, _, err := harness.Asking(t, "n\n", set...)
	if exitCode(err) != 1 || !regexp.MustCompile(`(?m)^Plan: 0 to create, [1-9]\d* to update, \d+ unchanged, 0 to prune\n  Revision tags  [1-9]\d* to update`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^    ~ MutatingWebhookConfiguration/`+hook+`: \S`).MatchString(out) || !strings.HasSuffix(out, "Apply anyways? [y/N] Cancelled.\n") {
		t.Errorf("an overlapping tag at a terminal, answered n: %v\n%s", err, out)
	}
	tagWroteNothing(t, c, "tag set", before)
	tagDelete(c, "tprompt-rogue")

	before = harness.AuditWrites(t, c)
	remove := append(k, "tag", "remove", name)
	if _, _, err := harness.Run(t, remove...); !isUsage(err) {
		t.Errorf("tag remove of a used tag without -y: %v", err)
	}
	out, _, err = harness.Asking(t, "n\n", remove...)
	if exitCode(err) != 1 || !regexp.MustCompile(`(?m)^Plan: [1-9]\d* to remove\n  Revision tags  [1-9]\d* to remove\n`).MatchString(out) ||
		!strings.Contains(out, "    - MutatingWebhookConfiguration/"+hook+"\n") || !strings.HasSuffix(out, "Proceed with operation? [y/N] Cancelled.\n") {
		t.Errorf("tag remove of a used tag at a terminal, answered n: %v\n%s", err, out)
	}
	tagWroteNothing(t, c, "tag remove", before)
	if out, _, err := harness.Run(t, append(k, "tag", "delete", name, "-y")...); err != nil || !strings.HasSuffix(out, "Revision tag "+name+" removed\n") {
		t.Errorf("tag delete: %v\n%s", err, out)
	}
}
