package action_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/operator/tag"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
)

// tagApp is the namespace TestTagE2E labels with its own tag.
const tagApp = "tag-e2e-app"

// tagList is what tag list shows: each tag, its revision and the namespaces using it.
func tagList(t *testing.T, c *cluster.Cluster) []tag.Description {
	t.Helper()
	tags, err := (&action.TagList{Config: config(c)}).Run(context.Background())
	tagMust(t, "tag list", err)
	return tags
}

// tagNames is "tag→revision" per tag.
func tagNames(tags []tag.Description) []string {
	var out []string
	for _, d := range tags {
		out = append(out, d.Tag+"→"+d.Revision)
	}
	return out
}

// TestTagE2E is the canary story with revision tags: the default revision installed (and
// its default tag with it), a canary revision beside it, the default tag moved to the
// canary, a tag of its own, the refusals (writing nothing), removal, and uninstalling the
// canary, which takes its tags along.
func TestTagE2E(t *testing.T) {
	c := purged(t)
	ctx := context.Background()
	_ = c.Kube.CoreV1().Namespaces().Delete(ctx, tagApp, metav1.DeleteOptions{})
	t.Cleanup(func() { _ = c.Kube.CoreV1().Namespaces().Delete(context.Background(), tagApp, metav1.DeleteOptions{}) })

	tagDefaultInstall(t, c)
	// Canary beside it: a revisioned install leaves the existing default tag alone.
	installWith(t, c, action.Install{HistoryMax: action.DefaultHistoryMax}, "profile=minimal", "revision=canary")
	if got := tagMWC(t, c, "istio-revision-tag-default").Labels["istio.io/rev"]; got != "default" {
		t.Errorf("the canary install moved the default tag to %q", got)
	}
	tagRefusals(t, c)
	tagMoveDefault(t, c)
	tagOwn(t, c)
	tagUninstallCanary(t, c)

	// The default revision takes the default tag back on its next install; a prune (the
	// gateways go with minimal) leaves it alone, a purge removes every tag.
	rec := installWith(t, c, action.Install{HistoryMax: action.DefaultHistoryMax}, "profile=default")
	if tags := rec.Of(event.RevisionTag); len(tags) != 1 || tags[0].Message != `Default revision tag points at revision "default"` {
		t.Errorf("re-install of the default revision: revision-tag events %+v", tags)
	}
	_, err := tagSet(c, "prod", "default", false).Run(ctx, nil)
	tagMust(t, "tag set prod", err)
	rec = installWith(t, c, action.Install{HistoryMax: action.DefaultHistoryMax}, "profile=minimal")
	for _, e := range rec.Of(event.Pruned) {
		if strings.Contains(e.Object, "revision-tag") {
			t.Errorf("the prune touched a tag: %s", e.Object)
		}
	}
	tagMWC(t, c, "istio-revision-tag-default")
	tagMWC(t, c, "istio-revision-tag-prod")
	if _, err := (&action.Uninstall{Config: config(c), Purge: true, Timeout: 2 * time.Minute}).Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if tags := tagList(t, c); len(tags) != 0 {
		t.Errorf("tags left after a purge: %v", tagNames(tags))
	}
}

// tagDefaultInstall: the default revision's install sets the default tag before it is
// done and deactivates its own injector, which the tag replaces; a re-install changes
// nothing and verify-install does not count the deactivated injector.
func tagDefaultInstall(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	rec := installWith(t, c, action.Install{HistoryMax: action.DefaultHistoryMax}, "profile=default")
	tagAt, doneAt := -1, -1
	for i, e := range rec.Events {
		switch {
		case e.Type == event.RevisionTag && e.TagOutcome == event.TagCreated && e.Message == `Default revision tag points at revision "default"`:
			tagAt = i
		case e.Type == event.Done:
			doneAt = i
		}
	}
	if tagAt < 0 || doneAt < tagAt {
		t.Errorf("install should set the default tag before it reports done: tag at %d, done at %d", tagAt, doneAt)
	}
	if l := tagMWC(t, c, "istio-revision-tag-default").Labels; l["istio.io/rev"] != "default" ||
		l["install.operator.istio.io/owning-resource-not-pruned"] != "true" || l["operator.istio.io/component"] != "Pilot" {
		t.Errorf("the install's default tag labels: %v", l)
	}
	if !tagDeactivated(tagMWC(t, c, "istio-sidecar-injector")) {
		t.Error("the default revision's injector is active beside the default tag")
	}
	rec = installWith(t, c, action.Install{HistoryMax: action.DefaultHistoryMax}, "profile=default")
	for _, e := range rec.Events {
		if (e.Type == event.Applied && e.Action != event.ActionUnchanged) || (e.Type == event.RevisionTag && e.TagOutcome != event.TagUnchanged) {
			t.Errorf("a re-install changed something: %+v", e)
		}
	}
	histVerify(t, c, "profile=default")
}

// tagRefusals: what tag set and tag remove refuse, each writing nothing; a dry run checks
// with the server and writes nothing either; generate renders with the canary's CA bundle.
func tagRefusals(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	for _, tc := range []struct {
		name, rev, msg string
	}{
		{"default", "canary", `revision tag "default" already exists, and --overwrite is false`},
		{"canary", "default", `cannot create revision tag "canary": found existing control plane revision with same name`},
		{"prod", "nope", `cannot find MutatingWebhookConfiguration or Service with revision "nope"`},
		{"Prod_1", "canary", `revision tag "Prod_1"`},
	} {
		tagWritesNothing(t, c, "tag set "+tc.name, func() {
			if _, err := tagSet(c, tc.name, tc.rev, false).Run(ctx, nil); err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("tag set %s --revision %s: %v, want %q", tc.name, tc.rev, err, tc.msg)
			}
		})
	}
	tagWritesNothing(t, c, "tag remove nope", func() {
		if err := (&action.TagRemove{Config: config(c), Tag: "nope"}).Run(ctx, nil); err == nil || !strings.Contains(err.Error(), `cannot remove tag "nope"`) {
			t.Errorf("tag remove nope: %v", err)
		}
	})
	tagWritesNothing(t, c, "tag set --dry-run", func() {
		dry := tagSet(c, "default", "canary", true)
		dry.DryRun = true
		changes, err := dry.Run(ctx, nil)
		tagMust(t, "tag set --dry-run", err)
		if !slices.ContainsFunc(changes, func(ch tag.Change) bool {
			return ch.Object == "MutatingWebhookConfiguration/istio-revision-tag-default" && ch.Action == event.ActionConfigured
		}) {
			t.Errorf("tag set --dry-run: %+v", changes)
		}
	})

	// What tag set would apply, as YAML: with the CA bundle the canary's istiod wrote, as
	// upstream prints it (a fresh one each run, so the golden holds its place).
	gen := tagSet(c, "default", "canary", true)
	gen.Generate = true
	p, err := gen.Plan(ctx)
	tagMust(t, "tag generate", err)
	y, err := p.YAML()
	tagMust(t, "tag generate", err)
	if n := strings.Count(string(y), "caBundle: LS0t"); n != 5 {
		t.Errorf("tag generate rendered %d CA bundles, want istiod's in each of the 5 webhooks:\n%s", n, y)
	}
	y = regexp.MustCompile(`caBundle: \S+`).ReplaceAll(y, []byte("caBundle: <istiod's CA bundle>"))
	golden.Check(t, "../../testdata/tag/generate-default-canary.yaml", y)
}

// tagMoveDefault moves the default tag to the canary: its webhooks, the default validator
// and the tag's Service call the canary's istiod; the old injector stays deactivated, and
// precheck of the default revision sees no conflict (its install takes the tag back).
func tagMoveDefault(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	_, err := tagSet(c, "default", "canary", true).Run(ctx, nil)
	tagMust(t, "tag set default --revision canary --overwrite", err)
	defaultTag := tagMWC(t, c, "istio-revision-tag-default")
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
		t.Errorf("tag Service: %v, %+v", err, svc)
	}
	if !tagDeactivated(tagMWC(t, c, "istio-sidecar-injector")) {
		t.Error("the old default injector is active")
	}
	res, err := action.Precheck(config(c)).Run(ctx)
	if err != nil || res.Failed {
		t.Errorf("precheck of the default revision with the default tag on the canary: %v %+v", err, res)
	}
}

// tagOwn: a tag of the canary's own, used by a namespace; moving it over another injector
// that selects its namespaces foresees the overlap and the update (writing nothing);
// removing it, used, plans the removal and names the namespace.
func tagOwn(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	_, err := tagSet(c, "prod", "canary", false).Run(ctx, nil)
	tagMust(t, "tag set prod", err)
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tagApp, Labels: map[string]string{"istio.io/rev": "prod"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// pkg/printer's TestTagListAfterMove prints this list in each format.
	tags := tagList(t, c)
	if got := tagNames(tags); !slices.Equal(got, []string{"default→canary", "prod→canary"}) || len(tags[0].Namespaces) != 0 ||
		!slices.Equal(tags[1].Namespaces, []string{tagApp}) {
		t.Errorf("tag list: %+v", tags)
	}

	rogue := tagRogue(t, c)
	move := tagSet(c, "prod", "default", true)
	tagWritesNothing(t, c, "the overlapping tag's plan and preview", func() {
		p, err := move.Plan(ctx)
		tagMust(t, "tag set prod --revision default: plan", err)
		if len(p.Overlaps) == 0 || p.Overlaps[0].Object != "MutatingWebhookConfiguration/istio-revision-tag-prod" || !tagOverlapsWith(p.Overlaps, rogue+"/rogue.sidecar-injector.istio.io") {
			t.Errorf("overlaps of prod moved beside %s: %+v", rogue, p.Overlaps)
		}
		s, err := move.Preview(ctx, p)
		tagMust(t, "tag set prod: preview", err)
		if s.Create != 0 || s.Update == 0 || s.Prune != 0 || len(s.Components) != 1 || s.Components[0].Title != "Revision tags" || s.Components[0].Update == 0 ||
			!slices.ContainsFunc(s.Objects[s.Components[0].Component], func(ch event.ObjectPlan) bool {
				return ch.Object == "MutatingWebhookConfiguration/istio-revision-tag-prod" && len(ch.Fields) > 0
			}) {
			t.Errorf("preview of the move: %+v", s)
		}
	})
	if err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, rogue, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	rm := &action.TagRemove{Config: config(c), Tag: "prod"}
	var p *action.TagRemovePlan
	tagWritesNothing(t, c, "the used tag's removal plan", func() {
		if p, err = rm.Plan(ctx); err != nil {
			t.Fatal(err)
		}
	})
	if s := p.Summary(); !slices.Equal(p.Namespaces, []string{tagApp}) || !slices.Contains(p.Objects, "MutatingWebhookConfiguration/istio-revision-tag-prod") ||
		len(s.Components) != 1 || s.Components[0].Title != "Revision tags" || s.Components[0].Remove == 0 {
		t.Errorf("plan of the used tag's removal: %+v, summary %+v", p, s)
	}
	tagMust(t, "tag remove prod", rm.Run(ctx, p))
	if got := tagNames(tagList(t, c)); slices.Contains(got, "prod→canary") {
		t.Errorf("prod is still listed: %v", got)
	}
}

// tagRogue creates an injector that selects the namespaces of the prod tag; it returns
// its name.
func tagRogue(t *testing.T, c *cluster.Cluster) string {
	t.Helper()
	none, ignore := admissionv1.SideEffectClassNone, admissionv1.Ignore
	rogue := &admissionv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "tag-e2e-rogue"},
		Webhooks: []admissionv1.MutatingWebhook{{
			Name: "rogue.sidecar-injector.istio.io", AdmissionReviewVersions: []string{"v1"},
			ClientConfig:      admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: "istio-system", Name: "istiod-canary"}},
			SideEffects:       &none,
			FailurePolicy:     &ignore,
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"istio.io/rev": "prod"}},
		}},
	}
	if _, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(context.Background(), rogue, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), rogue.Name, metav1.DeleteOptions{})
	})
	return rogue.Name
}

// tagUninstallCanary: uninstalling the canary removes the tags pointing at it, warning
// that the default tag goes, and only the canary.
func tagUninstallCanary(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	_, err := tagSet(c, "prod", "canary", false).Run(ctx, nil)
	tagMust(t, "tag set prod", err)
	rec := &event.Recorder{}
	u := &action.Uninstall{Config: config(c), Spec: spec.Options{Revision: "canary"}, Timeout: 2 * time.Minute, Events: rec}
	if _, err := u.Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var removed []string
	for _, e := range rec.Of(event.Pruned) {
		removed = append(removed, e.Object)
	}
	for _, gone := range []string{"MutatingWebhookConfiguration/istio-revision-tag-default", "ValidatingWebhookConfiguration/istiod-default-validator",
		"Service/istio-system/istiod-revision-tag-default", "MutatingWebhookConfiguration/istio-revision-tag-prod", "Deployment/istio-system/istiod-canary"} {
		if !slices.Contains(removed, gone) {
			t.Errorf("uninstall of the canary did not remove %s: %v", gone, removed)
		}
	}
	if !histHas(rec, event.Warning, histMessage, `the default revision tag points at revision "canary" and goes with it`) {
		t.Errorf("uninstall of the canary should warn that the default tag goes: %+v", rec.Of(event.Warning))
	}
	if tags := tagList(t, c); len(tags) != 0 {
		t.Errorf("tags left after the canary's uninstall: %v", tagNames(tags))
	}
	if histDeployment(t, c, "istiod") == nil {
		t.Error("the default revision went with the canary")
	}
}
