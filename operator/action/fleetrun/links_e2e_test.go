package fleetrun_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestLinksE2E links two clusters of the bed both ways with create-remote-secret's action
// (ApplyTo), has their real istiods sync each other, and then checks the link checks,
// the permissions they need, upstream's Secret, broken links, rotation, the target's lock,
// an uninstall that takes the links along, and that no credential is ever in what a run
// gives back.
func TestLinksE2E(t *testing.T) {
	l := newLinkRig(t, 3)
	l.purgeBed()
	t.Cleanup(l.purgeBed)
	start := time.Now()
	for _, c := range []string{"cluster-1", "cluster-2"} {
		l.install(c)
	}
	t.Logf("installed in %v", time.Since(start))

	t.Run("link both ways", func(t *testing.T) {
		l := l.with(t)
		res := l.applyLink("cluster-2", "cluster-1")
		if res.Secret != "istio-system/istio-remote-secret-cluster-2" || res.Context != "cluster-1" || !res.Created {
			t.Errorf("--apply-to wrote %s in %s (created %v), want istio-system/istio-remote-secret-cluster-2 created in cluster-1", res.Secret, res.Context, res.Created)
		}
		if !strings.Contains(res.Token.Kind, "long-lived ServiceAccount token") || res.Token.Expires != nil || res.Token.Secret == "" {
			t.Errorf("the link's token: %+v, want a long-lived ServiceAccount token of its own that never expires", res.Token)
		}
		l.applyLink("cluster-1", "cluster-2")
		for _, pair := range [][2]string{{"cluster-1", "cluster-2"}, {"cluster-2", "cluster-1"}} {
			s := l.linkSecret(pair[0], "istio-remote-secret-"+pair[1])
			if s.Labels["istio/multiCluster"] != "true" || s.Annotations["networking.istio.io/cluster"] != pair[1] || len(s.Data) != 1 || s.Data[pair[1]] == nil {
				t.Errorf("Secret in %s: labels %v, annotations %v, keys %d", pair[0], s.Labels, s.Annotations, len(s.Data))
			}
			if !harness.Authenticates(t, l.member(pair[1]), harness.LinkToken(t, s, pair[1])) {
				t.Errorf("the token in %s's Secret does not authenticate at %s", pair[0], pair[1])
			}
		}
		l.collectTokens()
	})

	t.Run("checks pass", func(t *testing.T) { linkChecksPass(t, l.with(t)) })

	t.Run("secrets permission", func(t *testing.T) { linkSecretsPermission(t, l.with(t)) })

	t.Run("upstream output", func(t *testing.T) { linkUpstreamGolden(t, l.with(t)) })

	t.Run("broken links", func(t *testing.T) { linkBrokenLinks(t, l.with(t)) })

	t.Run("rotation", func(t *testing.T) {
		l := l.with(t)
		c2 := l.member("cluster-2")
		old := harness.LinkToken(t, l.linkSecret("cluster-1", "istio-remote-secret-cluster-2"), "cluster-2")
		res := l.applyLink("cluster-2", "cluster-1")
		if res.Created || len(res.Deleted) == 0 {
			t.Errorf("a second --apply-to: created %v, deleted %v; want the Secret updated and the previous token deleted", res.Created, res.Deleted)
		}
		l.collectTokens()
		fresh := harness.LinkToken(t, l.linkSecret("cluster-1", "istio-remote-secret-cluster-2"), "cluster-2")
		if fresh == old {
			t.Fatal("the token did not change")
		}
		if !harness.Revoked(t, c2, old) {
			t.Error("the old token still authenticates")
		}
		if !harness.Authenticates(t, c2, fresh) {
			t.Error("the new token does not authenticate")
		}
		l.mustWork("cluster-1")
	})

	t.Run("apply-to takes the target's lock", func(t *testing.T) { linkTargetLock(t, l.with(t)) })

	t.Run("uninstall with remote contexts", func(t *testing.T) { linkUninstallRemote(t, l.with(t)) })

	t.Run("no credential in any output", func(t *testing.T) { linkNoCredential(t, l.with(t)) })
}

// linkChecksPass: each istiod syncs the other cluster through the Secret written, and
// remote-clusters and verify-install (with its link checks) pass and agree with istiod.
func linkChecksPass(t *testing.T, l *linkRig) {
	for _, c := range []string{"cluster-1", "cluster-2"} {
		other := map[string]string{"cluster-1": "cluster-2", "cluster-2": "cluster-1"}[c]
		linkIstiodLists(t, l.member(c), time.Minute, c+"  synced", other+" istio-system/istio-remote-secret-"+other+" synced")
		res := l.remoteClusters(c)
		l.sameAsIstiod(c, res)
		if res.Broken {
			t.Errorf("remote-clusters in %s: %s", c, linkFailures(res.Report))
		}
		// The cluster's real istiod answers: both clusters synced.
		for _, want := range []string{"may do all", "reports synced"} {
			if !slices.ContainsFunc(res.Report.Results, func(r check.Result) bool { return r.Passed && strings.Contains(r.Message, want) }) {
				t.Errorf("remote-clusters in %s: no passed check says %q", c, want)
			}
		}
		istiod := regexp.MustCompile(`^istiod-\S+$`)
		want := map[string]string{c: "", other: "istio-system/istio-remote-secret-" + other}
		for _, r := range res.Rows {
			if secret, ok := want[r.Name]; !ok || r.Secret != secret || r.Status != "synced" || !istiod.MatchString(r.Istiod) || r.Revision != "default" {
				t.Errorf("remote-clusters in %s: row %+v", c, r)
			}
		}
		if len(res.Rows) != 2 || res.Rows[1].Name != other {
			t.Errorf("remote-clusters in %s: rows %+v, want %s, then %s", c, res.Rows, c, other)
		}
		if len(res.Report.Results) < 10 {
			t.Errorf("remote-clusters in %s runs only %d link checks", c, len(res.Report.Results))
		}
		v := l.verify(c, l.config(c))
		if v.Failed || !slices.ContainsFunc(v.Report.Results, func(r check.Result) bool { return r.Section == "Link to "+other }) {
			t.Errorf("verify-install in %s: failed %v, want it to pass with the link checks of %s: %s", c, v.Failed, other, linkFailures(v.Report))
		}
	}
}

// linkTargetLock: --apply-to writes under the target cluster's lock; held by another, a
// run with no lock wait fails (exit 3, naming the holder) having written nothing and
// issued no token.
func linkTargetLock(t *testing.T, l *linkRig) {
	before := l.linkSecret("cluster-1", "istio-remote-secret-cluster-2").ResourceVersion
	tokens := func() int {
		list, err := l.member("cluster-2").Kube.CoreV1().Secrets("istio-system").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range list.Items {
			if s.Type == corev1.SecretTypeServiceAccountToken {
				n++
			}
		}
		return n
	}
	had := tokens()
	holder := linkHoldLock(t, l.member("cluster-1"))
	_, _, err := l.createSecret("cluster-2", func(a *action.CreateRemoteSecret) {
		a.Name, a.ApplyTo = "cluster-2", "cluster-1"
		a.Lock = &action.LockOptions{Timeout: 0, Command: "istioctl create-remote-secret"}
	})
	var held *action.LockHeldError
	if !errors.As(err, &held) || event.ExitCode(err) != event.ExitLocked || !strings.Contains(err.Error(), holder.String()) {
		t.Errorf("--apply-to into a cluster whose lock is held: %v (exit %d), want exit %d naming %q", err, event.ExitCode(err), event.ExitLocked, holder.String())
	}
	if after := l.linkSecret("cluster-1", "istio-remote-secret-cluster-2").ResourceVersion; after != before {
		t.Errorf("the Secret was written without the lock: resourceVersion %s -> %s", before, after)
	}
	if n := tokens(); n != had {
		t.Errorf("token Secrets in cluster-2: %d before, %d after the refused run (its own token is not deleted again)", had, n)
	}
}

// linkUninstallRemote: uninstalling cluster-2 with --remote-contexts cluster-1 removes
// cluster-2's link from cluster-1 (a dry run only says so), and leaves cluster-3's there
// and cluster-2's own link Secret.
func linkUninstallRemote(t *testing.T, l *linkRig) {
	l.applyLink("cluster-3", "cluster-1")
	l.collectTokens()
	// cluster-3 is a remote: no istiod, its name only in its injector's path.
	linkRemoteInjector(t, l)
	rc := l.remoteClusters("cluster-1")
	if !slices.ContainsFunc(rc.Report.Results, func(r check.Result) bool {
		return strings.Contains(r.Message, `the cluster's name is "cluster-3" (the injection path of MutatingWebhookConfiguration istio-sidecar-injector)`)
	}) {
		t.Errorf("remote-clusters does not read the remote's name from its injection path: %+v", rc.Report.Results)
	}
	names := func() string {
		list, err := l.member("cluster-1").Kube.CoreV1().Secrets("istio-system").List(context.Background(), metav1.ListOptions{LabelSelector: "istio/multiCluster=true"})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range list.Items {
			out = append(out, s.Name)
		}
		return strings.Join(out, ",")
	}
	uninstall := func(dry bool) (*action.UninstallPlan, *event.Recorder) {
		rec := &event.Recorder{}
		u := &action.Uninstall{Config: l.config("cluster-2"), Spec: spec.Options{Revision: "default"}, DryRun: dry, Timeout: 2 * time.Minute,
			RemoteContexts: []string{"cluster-1"}, Events: rec}
		plan, err := u.Run(context.Background(), nil)
		l.record(false, plan, err, rec.Events)
		if err != nil {
			t.Fatalf("uninstall (dry run %v): %v", dry, err)
		}
		return plan, rec
	}
	plan, rec := uninstall(true)
	if len(plan.Remote) != 1 || plan.Remote[0].Context != "cluster-1" || plan.Remote[0].Object != "Secret/istio-system/istio-remote-secret-cluster-2" || !plan.Remote[0].Whole {
		t.Errorf("uninstall --dry-run removes the remote links %+v, want cluster-2's whole Secret from cluster-1", plan.Remote)
	}
	if !slices.ContainsFunc(rec.Of(event.Pruned), func(e event.Event) bool {
		return e.Object == "Secret/istio-system/istio-remote-secret-cluster-2" && e.Action == event.ActionRemoved
	}) {
		t.Errorf("uninstall --dry-run does not say it would remove cluster-2's link from cluster-1: %+v", rec.Of(event.Pruned))
	}
	if !slices.ContainsFunc(rec.Of(event.Warning), func(e event.Event) bool {
		return e.Object == "Secret/istio-system/istio-remote-secret-cluster-1" && strings.HasPrefix(e.Message, "stays:")
	}) {
		t.Errorf("uninstall --dry-run does not say cluster-2's own link stays: %+v", rec.Of(event.Warning))
	}
	if got := names(); got != "istio-remote-secret-cluster-2,istio-remote-secret-cluster-3" {
		t.Fatalf("before: cluster-1 holds %s", got)
	}
	uninstall(false)
	if got := names(); got != "istio-remote-secret-cluster-3" {
		t.Errorf("after uninstalling cluster-2, cluster-1 holds %s, want only cluster-3's", got)
	}
	l.linkSecret("cluster-2", "istio-remote-secret-cluster-1") // its own stays
}

// linkNoCredential: no token the clusters issued and no client key of the bed's
// kubeconfig is in anything a run gave back (results, plans, events, warnings, errors) or
// in an install record, but in the Secrets made to be printed.
func linkNoCredential(t *testing.T, l *linkRig) { l.said.NoCredential(t, l.bed, 4, 1) }
