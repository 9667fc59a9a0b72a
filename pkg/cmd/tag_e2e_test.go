package cmd_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/pkg/cmd"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestTagE2E is the canary story with revision tags: the default revision installed (and
// its default tag with it), a canary revision beside it, the default tag moved to the
// canary, a tag of its own, the refusals (writing nothing), removal, and uninstalling the
// canary, which takes its tags along.
func TestTagE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	k := []string{"--kubeconfig", c.Kubeconfig}
	ist := func(args ...string) string {
		t.Helper()
		out, stderr, err := harness.Run(t, append(k, args...)...)
		if err != nil {
			t.Fatalf("istioctl %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr)
		}
		return out
	}
	fails := func(args ...string) (string, string, error) {
		t.Helper()
		before := snapshot(t, c)
		out, stderr, err := harness.Run(t, append(k, args...)...)
		if err == nil {
			t.Fatalf("istioctl %s succeeded:\n%s", strings.Join(args, " "), out)
		}
		if after := snapshot(t, c); after != before {
			t.Errorf("istioctl %s failed but wrote:\nbefore %s\nafter  %s", strings.Join(args, " "), before, after)
		}
		return out, stderr, err
	}
	ist("uninstall", "--purge", "-y")
	t.Cleanup(func() { _, _, _ = harness.Run(t, append(k, "uninstall", "--purge", "-y")...) })
	app := "tag-e2e-app"
	_ = c.Kube.CoreV1().Namespaces().Delete(ctx, app, metav1.DeleteOptions{})
	t.Cleanup(func() { _ = c.Kube.CoreV1().Namespaces().Delete(context.Background(), app, metav1.DeleteOptions{}) })

	// The default revision: its install sets the default tag and deactivates its own
	// injector, which the tag replaces.
	out := ist("install", "-y")
	tagLine := strings.Index(out, `✔ Default revision tag points at revision "default"`)
	if done := strings.Index(out, "✔ Installation complete"); tagLine < 0 || done < tagLine {
		t.Errorf("install should set the default tag before it reports done:\n%s", out)
	}
	defaultTag := mwc(t, c, "istio-revision-tag-default")
	if l := defaultTag.Labels; l["istio.io/rev"] != "default" || l["install.operator.istio.io/owning-resource-not-pruned"] != "true" || l["operator.istio.io/component"] != "Pilot" {
		t.Errorf("the install's default tag labels: %v", l)
	}
	if !deactivated(mwc(t, c, "istio-sidecar-injector")) {
		t.Error("the default revision's injector is active beside the default tag")
	}
	if out := ist("install", "-y"); !strings.Contains(out, "(0 applied,") || strings.Contains(out, "configured") {
		t.Errorf("a re-install changed something:\n%s", out)
	}
	if out := ist("verify-install", "--set", "profile=default"); !strings.Contains(out, "0 errors") {
		t.Errorf("verify-install reports the deactivated injector:\n%s", out)
	}

	// Canary beside it: a revisioned install leaves the existing default tag alone.
	ist("install", "-y", "-r", "canary", "--set", "profile=minimal")
	if got := mwc(t, c, "istio-revision-tag-default").Labels["istio.io/rev"]; got != "default" {
		t.Errorf("the canary install moved the default tag to %q", got)
	}

	// Refusals write nothing.
	for _, tc := range []struct {
		args  []string
		usage bool
		msg   string
	}{
		{[]string{"tag", "set", "default", "--revision", "canary"}, false, `revision tag "default" already exists, and --overwrite is false`},
		{[]string{"tag", "set", "canary", "--revision", "default"}, false, `cannot create revision tag "canary": found existing control plane revision with same name`},
		{[]string{"tag", "set", "prod", "--revision", "nope"}, false, `cannot find MutatingWebhookConfiguration or Service with revision "nope"`},
		{[]string{"tag", "set", "Prod_1", "--revision", "canary"}, false, `revision tag "Prod_1"`},
		{[]string{"tag", "set", "prod"}, true, "--revision is required"},
		{[]string{"tag", "set", "a", "b", "--revision", "canary"}, true, "single tag"},
		{[]string{"tag", "remove", "nope"}, false, `cannot remove tag "nope"`},
		{[]string{"tag", "list", "-o", "xml"}, true, "--output"},
		{[]string{"tag", "list", "-o", "custom-columns=TAG"}, true, "HEADER:PATH"},
	} {
		_, _, err := fails(tc.args...)
		var usage *cmd.UsageError
		if !strings.Contains(fmt.Sprint(err), tc.msg) || errors.As(err, &usage) != tc.usage {
			t.Errorf("istioctl %s: %v (usage error: %v), want %q (usage error: %v)", strings.Join(tc.args, " "), err, errors.As(err, &usage), tc.msg, tc.usage)
		}
	}
	// A dry run checks with the server and writes nothing either.
	before := snapshot(t, c)
	out = ist("tag", "set", "default", "--revision", "canary", "--overwrite", "--dry-run")
	if !strings.Contains(out, "MutatingWebhookConfiguration/istio-revision-tag-default would be configured") || !strings.Contains(out, "nothing was written") {
		t.Errorf("tag set --dry-run:\n%s", out)
	}
	if after := snapshot(t, c); after != before {
		t.Errorf("tag set --dry-run wrote:\nbefore %s\nafter  %s", before, after)
	}

	// What tag set would apply, as YAML: with the CA bundle the canary's istiod wrote, as
	// upstream prints it (a fresh one each run, so the golden holds its place).
	generated := ist("tag", "generate", "default", "--revision", "canary", "--overwrite")
	if n := strings.Count(generated, "caBundle: LS0t"); n != 5 {
		t.Errorf("tag generate printed %d CA bundles, want istiod's in each of the 5 webhooks:\n%s", n, generated)
	}
	generated = regexp.MustCompile(`caBundle: \S+`).ReplaceAllString(generated, "caBundle: <istiod's CA bundle>")
	golden.Check(t, "../../testdata/tag/generate-default-canary.yaml", []byte(generated))

	// Move the default to the canary.
	out = ist("tag", "set", "default", "--revision", "canary", "--overwrite")
	want := `Revision tag "default" created, referencing control plane revision "canary". To enable injection using this
revision tag, use 'kubectl label namespace <NAMESPACE> istio.io/rev=default'
`
	if out != want {
		t.Errorf("tag set printed\n%q\nwant upstream's\n%q", out, want)
	}
	defaultTag = mwc(t, c, "istio-revision-tag-default")
	for _, wh := range defaultTag.Webhooks {
		if s := wh.ClientConfig.Service; s == nil || s.Name != "istiod-canary" || s.Namespace != "istio-system" {
			t.Errorf("default tag webhook %s calls %+v, want istiod-canary", wh.Name, wh.ClientConfig)
		}
	}
	for k := range defaultTag.Labels {
		if strings.Contains(k, "operator.istio.io") {
			t.Errorf("a tag set by hand keeps the installer label %s", k)
		}
	}
	vwc, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "istiod-default-validator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, wh := range vwc.Webhooks {
		// istiod switched it to Fail before the move, and the move leaves it to istiod.
		if s := wh.ClientConfig.Service; s == nil || s.Name != "istiod-canary" || wh.FailurePolicy == nil || *wh.FailurePolicy != admissionv1.Fail {
			t.Errorf("default validator %s: %+v, failure policy %v; want istiod-canary and istiod's Fail", wh.Name, wh.ClientConfig.Service, wh.FailurePolicy)
		}
	}
	svc, err := c.Kube.CoreV1().Services("istio-system").Get(ctx, "istiod-revision-tag-default", metav1.GetOptions{})
	if err != nil || svc.Spec.Selector["istio.io/rev"] != "canary" {
		t.Errorf("tag Service: %v, selector %v", err, svc.Spec.Selector)
	}
	if !deactivated(mwc(t, c, "istio-sidecar-injector")) {
		t.Error("the old default injector is active")
	}
	// An install of the default revision would take the tag back: no conflict for precheck.
	if out, _, err := harness.Run(t, append(k, "x", "precheck")...); err != nil {
		t.Errorf("precheck of the default revision with the default tag on the canary: %v\n%s", err, out)
	}

	// A tag of its own, used by a namespace.
	ist("tag", "set", "prod", "--revision", "canary")
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: app, Labels: map[string]string{"istio.io/rev": "prod"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "../../testdata/tag/list.txt", []byte(ist("tag", "list")))
	// kubectl's formats (pkg/printer/list.go).
	for name, format := range map[string]string{
		"name":           "name",
		"jsonpath":       `jsonpath={range .items[*]}{.tag} -> {.revision} {.namespaces}{"\n"}{end}`,
		"custom-columns": "custom-columns=TAG:.tag,REVISION:.revision,NAMESPACES:.namespaces[*]",
	} {
		golden.Check(t, "../../testdata/tag/list-"+name+".txt", []byte(ist("tag", "list", "-o", format)))
	}
	if out := ist("tag", "show", "-o", "json"); !strings.Contains(out, `"namespaces": [`+"\n\t\t\t\""+app+`"`) {
		t.Errorf("tag show -o json:\n%s", out)
	}

	// An injector that already selects the prod namespaces: moving the tag asks first.
	rogue := &admissionv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "tag-e2e-rogue"},
		Webhooks: []admissionv1.MutatingWebhook{{
			Name: "rogue.sidecar-injector.istio.io", AdmissionReviewVersions: []string{"v1"},
			ClientConfig:      admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: "istio-system", Name: "istiod-canary"}},
			SideEffects:       ptr(admissionv1.SideEffectClassNone),
			FailurePolicy:     ptr(admissionv1.Ignore),
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"istio.io/rev": "prod"}},
		}},
	}
	if _, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, rogue, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := fails("tag", "set", "prod", "--revision", "default", "--overwrite")
	var usage *cmd.UsageError
	if !errors.As(err, &usage) || !strings.Contains(stderr, "Error [IST0139] (MutatingWebhookConfiguration istio-revision-tag-prod)") ||
		!strings.Contains(stderr, "tag-e2e-rogue/rogue.sidecar-injector.istio.io") {
		t.Errorf("an overlapping tag without -y and without a terminal: %v\n%s", err, stderr)
	}
	// At a terminal it says what the move changes (a server-side dry run) before asking;
	// answered n, it writes nothing.
	unasked := snapshot(t, c)
	out, _, err = harness.Asking(t, "n\n", append(k, "tag", "set", "prod", "--revision", "default", "--overwrite")...)
	if exitCode(err) != 1 || !regexp.MustCompile(`(?m)^Plan: 0 to create, [1-9]\d* to update, \d+ unchanged, 0 to prune\n  Revision tags  [1-9]\d* to update`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^    ~ MutatingWebhookConfiguration/istio-revision-tag-prod: \S`).MatchString(out) || !strings.HasSuffix(out, "Apply anyways? [y/N] Cancelled.\n") {
		t.Errorf("an overlapping tag at a terminal, answered n: %v\n%s", err, out)
	}
	if after := snapshot(t, c); after != unasked {
		t.Errorf("tag set answered n wrote:\nbefore %s\nafter  %s", unasked, after)
	}
	if err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, rogue.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// Removing a tag a namespace uses needs a confirmation.
	if _, _, err := fails("tag", "remove", "prod"); !errors.As(err, &usage) {
		t.Errorf("tag remove of a used tag without -y: %v", err)
	}
	unasked = snapshot(t, c)
	out, _, err = harness.Asking(t, "n\n", append(k, "tag", "remove", "prod")...)
	if exitCode(err) != 1 || !regexp.MustCompile(`(?m)^Plan: [1-9]\d* to remove\n  Revision tags  [1-9]\d* to remove\n`).MatchString(out) ||
		!strings.Contains(out, "    - MutatingWebhookConfiguration/istio-revision-tag-prod\n") || !strings.HasSuffix(out, "Proceed with operation? [y/N] Cancelled.\n") {
		t.Errorf("tag remove of a used tag at a terminal, answered n: %v\n%s", err, out)
	}
	if after := snapshot(t, c); after != unasked {
		t.Errorf("tag remove answered n wrote:\nbefore %s\nafter  %s", unasked, after)
	}
	if out := ist("tag", "delete", "prod", "-y"); !strings.HasSuffix(out, "Revision tag prod removed\n") {
		t.Errorf("tag delete:\n%s", out)
	}
	if out := ist("tag", "list"); strings.Contains(out, "prod") {
		t.Errorf("prod is still listed:\n%s", out)
	}

	// Uninstalling the canary removes the tags pointing at it, and only the canary.
	ist("tag", "set", "prod", "--revision", "canary")
	out = ist("uninstall", "-r", "canary", "-y")
	for _, gone := range []string{"MutatingWebhookConfiguration/istio-revision-tag-default", "ValidatingWebhookConfiguration/istiod-default-validator",
		"Service/istio-system/istiod-revision-tag-default", "MutatingWebhookConfiguration/istio-revision-tag-prod", "Deployment/istio-system/istiod-canary"} {
		if !strings.Contains(out, gone+" removed") {
			t.Errorf("uninstall -r canary did not remove %s:\n%s", gone, out)
		}
	}
	if !strings.Contains(out, "the default revision tag points at revision \"canary\" and goes with it") {
		t.Errorf("uninstall -r canary should warn that the default tag goes:\n%s", out)
	}
	if out := ist("tag", "list"); out != "No Istio revision tags found.\n" {
		t.Errorf("tags left after uninstall -r canary:\n%s", out)
	}
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod", metav1.GetOptions{}); err != nil {
		t.Errorf("the default revision went with the canary: %v", err)
	}

	// The default revision takes the default tag back on its next install; a prune (the
	// gateways go with minimal) leaves it alone, a purge removes every tag.
	if out := ist("install", "-y"); !strings.Contains(out, `✔ Default revision tag points at revision "default"`) {
		t.Errorf("re-install of the default revision:\n%s", out)
	}
	ist("tag", "set", "prod", "--revision", "default")
	if out := ist("install", "-y", "--set", "profile=minimal"); strings.Contains(out, "revision-tag") && strings.Contains(out, "removed") {
		t.Errorf("the prune touched a tag:\n%s", out)
	}
	mwc(t, c, "istio-revision-tag-default")
	mwc(t, c, "istio-revision-tag-prod")
	ist("uninstall", "--purge", "-y")
	if out := ist("tag", "list"); out != "No Istio revision tags found.\n" {
		t.Errorf("tags left after a purge:\n%s", out)
	}
}

// TestTagDeactivatesActiveInjector: an active default injector without a default tag (an
// install from before tags) is deactivated by tag set default once the tag exists, and
// tag generate reports the overlap it would have.
func TestTagDeactivatesActiveInjector(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	k := []string{"--kubeconfig", c.Kubeconfig}
	ist := func(args ...string) (string, string) {
		t.Helper()
		out, stderr, err := harness.Run(t, append(k, args...)...)
		if err != nil {
			t.Fatalf("istioctl %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr)
		}
		return out, stderr
	}
	ist("uninstall", "--purge", "-y")
	t.Cleanup(func() { _, _, _ = harness.Run(t, append(k, "uninstall", "--purge", "-y")...) })
	ist("install", "-y", "--set", "profile=minimal")
	ist("tag", "remove", "default", "-y")
	// As an older install left it: active, no tag.
	patch := `[`
	injector := mwc(t, c, "istio-sidecar-injector")
	for i := range injector.Webhooks {
		if i > 0 {
			patch += ","
		}
		patch += fmt.Sprintf(`{"op":"replace","path":"/webhooks/%d/namespaceSelector","value":{"matchLabels":{"istio-injection":"enabled"}}},`+
			`{"op":"replace","path":"/webhooks/%d/objectSelector","value":{}}`, i, i)
	}
	patch += "]"
	if _, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Patch(ctx, "istio-sidecar-injector", types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if deactivated(mwc(t, c, "istio-sidecar-injector")) {
		t.Fatal("the injector is still deactivated")
	}

	_, stderr := ist("tag", "generate", "default", "--revision", "default")
	if !strings.Contains(stderr, "creating tag would conflict") || !strings.Contains(stderr, "istio-sidecar-injector/") {
		t.Errorf("tag generate beside an active default injector should report the overlap:\n%s", stderr)
	}
	if deactivated(mwc(t, c, "istio-sidecar-injector")) {
		t.Error("tag generate deactivated the injector")
	}
	out, stderr := ist("tag", "set", "default", "--revision", "default")
	if stderr != "" || !strings.HasPrefix(out, `Revision tag "default" created`) {
		t.Errorf("tag set default over the injector it deactivates should see no overlap:\n%s\n%s", out, stderr)
	}
	if !deactivated(mwc(t, c, "istio-sidecar-injector")) {
		t.Error("tag set default left the default revision's injector active")
	}
}

func ptr[T any](v T) *T { return &v }

func mwc(t *testing.T, c *cluster.Cluster, name string) *admissionv1.MutatingWebhookConfiguration {
	t.Helper()
	w, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("MutatingWebhookConfiguration %s: %v", name, err)
	}
	return w
}

// deactivated says every webhook has upstream's never-match selectors.
func deactivated(w *admissionv1.MutatingWebhookConfiguration) bool {
	never := func(s *metav1.LabelSelector) bool {
		return s != nil && len(s.MatchExpressions) == 0 && len(s.MatchLabels) == 1 && s.MatchLabels["istio.io/deactivated"] == "never-match"
	}
	for _, wh := range w.Webhooks {
		if !never(wh.NamespaceSelector) || !never(wh.ObjectSelector) {
			return false
		}
	}
	return len(w.Webhooks) > 0
}

// snapshot names every webhook configuration and istio-system Service with its resource
// version: two equal snapshots mean nothing was written to them.
func snapshot(t *testing.T, c *cluster.Cluster) string {
	t.Helper()
	// istiod writes its webhooks' CA bundle (a tag's too, once applied) and switches its
	// validators to Fail a moment after they appear: wait until that has happened, as two
	// readings apart agree.
	last := snapshotOnce(t, c)
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		time.Sleep(300 * time.Millisecond)
		now := snapshotOnce(t, c)
		if now == last {
			break
		}
		last = now
	}
	return last
}

func snapshotOnce(t *testing.T, c *cluster.Cluster) string {
	t.Helper()
	ctx := context.Background()
	var items []string
	mw, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range mw.Items {
		items = append(items, "mwc/"+o.Name+"@"+o.ResourceVersion)
	}
	vw, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range vw.Items {
		items = append(items, "vwc/"+o.Name+"@"+o.ResourceVersion)
	}
	svcs, err := c.Kube.CoreV1().Services("istio-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range svcs.Items {
		items = append(items, "svc/"+o.Name+"@"+o.ResourceVersion)
	}
	sort.Strings(items)
	return strings.Join(items, " ")
}
