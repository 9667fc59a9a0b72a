package action_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// tagMWC is the MutatingWebhookConfiguration name.
func tagMWC(t *testing.T, c *cluster.Cluster, name string) *admissionv1.MutatingWebhookConfiguration {
	t.Helper()
	w, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("MutatingWebhookConfiguration %s: %v", name, err)
	}
	return w
}

// tagDeactivated says every webhook has upstream's never-match selectors.
func tagDeactivated(w *admissionv1.MutatingWebhookConfiguration) bool {
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

// tagSet is the TagSet action of tag set (and tag generate) for the test cluster.
func tagSet(c *cluster.Cluster, name, rev string, overwrite bool) *action.TagSet {
	return &action.TagSet{Config: config(c), Tag: name, Revision: rev, Overwrite: overwrite}
}

// tagMust runs a tag action that must succeed.
func tagMust(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// tagWritesNothing runs f and fails when the apiserver counted a write of the admin's
// (the lock's Lease aside: harness.AuditWrites) while it ran.
func tagWritesNothing(t *testing.T, c *cluster.Cluster, what string, f func()) {
	t.Helper()
	harness.Settled(t, c)
	before := harness.AuditWrites(t, c)
	f()
	if w := harness.WritesBetween(before, harness.AuditWrites(t, c)); len(w) > 0 {
		t.Errorf("%s wrote: %v", what, w)
	}
}

// TestTagDeactivatesActiveInjector: an active default injector without a default tag (an
// install from before tags) is deactivated by tag set default once the tag exists, and
// tag generate reports the overlap it would have.
func TestTagDeactivatesActiveInjector(t *testing.T) {
	c := purged(t)
	ctx := context.Background()
	installWith(t, c, action.Install{HistoryMax: action.DefaultHistoryMax}, "profile=minimal")
	tagMust(t, "tag remove default", (&action.TagRemove{Config: config(c), Tag: "default"}).Run(ctx, nil))
	// As an older install left it: active, no tag.
	var ops []string
	for i := range tagMWC(t, c, "istio-sidecar-injector").Webhooks {
		ops = append(ops, fmt.Sprintf(`{"op":"replace","path":"/webhooks/%d/namespaceSelector","value":{"matchLabels":{"istio-injection":"enabled"}}},`+
			`{"op":"replace","path":"/webhooks/%d/objectSelector","value":{}}`, i, i))
	}
	patch := "[" + strings.Join(ops, ",") + "]"
	if _, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Patch(ctx, "istio-sidecar-injector", types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if tagDeactivated(tagMWC(t, c, "istio-sidecar-injector")) {
		t.Fatal("the injector is still deactivated")
	}

	gen := tagSet(c, "default", "default", false)
	gen.Generate = true
	p, err := gen.Plan(ctx)
	tagMust(t, "tag generate default", err)
	if !tagOverlapsWith(p.Overlaps, "istio-sidecar-injector/") {
		t.Errorf("tag generate beside an active default injector should report the overlap: %+v", p.Overlaps)
	}
	if tagDeactivated(tagMWC(t, c, "istio-sidecar-injector")) {
		t.Error("tag generate deactivated the injector")
	}
	set := tagSet(c, "default", "default", false)
	p, err = set.Plan(ctx)
	tagMust(t, "tag set default: plan", err)
	if len(p.Overlaps) != 0 {
		t.Errorf("tag set default over the injector it deactivates should see no overlap: %+v", p.Overlaps)
	}
	_, err = set.Run(ctx, p)
	tagMust(t, "tag set default", err)
	if !tagDeactivated(tagMWC(t, c, "istio-sidecar-injector")) {
		t.Error("tag set default left the default revision's injector active")
	}
}

// tagOverlapsWith says whether an IST0139 overlap names the webhook want (config/webhook).
func tagOverlapsWith(overlaps []check.Result, want string) bool {
	for _, r := range overlaps {
		if r.Code == "IST0139" && strings.Contains(r.Message, want) {
			return true
		}
	}
	return false
}
