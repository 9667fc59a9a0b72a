package action_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/migrate"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestRevisionUpgradeRecordCheckedE2E: revision a (1.29.4, the default tag) injects four
// Deployments: one in each of two namespaces labelled istio.io/rev=a (the run relabels
// them), two in a namespace labelled istio-injection=enabled (it follows the default tag).
// A revision upgrade to b (--relabel, batches of one) is stopped once batch 1 is through.
// Then a recorded Deployment not restarted yet, and one of the relabelled namespaces, are
// deleted. The same upgrade resumed with --namespaces naming the other relabelled namespace
// finishes, restarts nothing outside it, sends no write that could create the deleted
// namespace, and warns about the deleted Deployment, the deleted namespace and each
// workload it leaves; --rollback then finishes, warns about the deleted Deployment and
// namespace, returns every remaining pod to a, and creates no namespace either.
func TestRevisionUpgradeRecordCheckedE2E(t *testing.T) {
	c := revFromA(t)
	ctx := context.Background()
	rel := []string{
		harness.LabelledNamespace(t, c, map[string]string{"istio.io/rev": "a"}),
		harness.LabelledNamespace(t, c, map[string]string{"istio.io/rev": "a"}),
	}
	enabled := harness.LabelledNamespace(t, c, map[string]string{"istio-injection": "enabled"})
	all := []string{"Deployment/" + rel[0] + "/w0", "Deployment/" + rel[1] + "/w0", "Deployment/" + enabled + "/w0", "Deployment/" + enabled + "/w1"}
	for _, w := range all {
		parts := strings.Split(w, "/")
		revApp(t, c, parts[1], parts[2])
	}
	recOn(t, c, all, "a")

	// Stopped once batch 1 is through.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	batchOfOne := func(a *action.RevisionUpgrade) { a.Migrate.BatchSize = 1 }
	_, _, err := revUpgrade(runCtx, c, func(a *action.RevisionUpgrade) {
		batchOfOne(a)
		inner := a.Events
		a.Events = event.SinkFunc(func(e event.Event) {
			inner.Emit(e)
			if e.Type == event.Batch && e.BatchResult == event.RunSucceeded {
				cancel()
			}
		})
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the stopped run ended with %v, want interrupted", err)
	}
	rec, err := migrate.LoadRecord(ctx, harness.Client(t, c), "istio-system")
	if err != nil || rec == nil || rec.Done != 1 || len(rec.Relabel) != 2 {
		t.Fatalf("the stopped run's record: %+v, %v; want batch 1 done, both namespaces relabelled", rec, err)
	}
	done := rec.Batches[0][0].String()

	// The namespace deleted and the one kept: the deleted one's workload not restarted yet;
	// the Deployment deleted: one of enabled's not restarted yet.
	doomed, kept := rel[0], rel[1]
	if done == "Deployment/"+doomed+"/w0" {
		doomed, kept = kept, doomed
	}
	gone := "Deployment/" + enabled + "/w1"
	if done == gone {
		gone = "Deployment/" + enabled + "/w0"
	}
	var outside []string // the workloads left that the resume must not restart
	for _, w := range all {
		if w != gone && !strings.Contains(w, "/"+doomed+"/") && !strings.Contains(w, "/"+kept+"/") {
			outside = append(outside, w)
		}
	}
	before := revUIDs(t, c, outside)
	if err := c.Kube.AppsV1().Deployments(enabled).Delete(ctx, strings.Split(gone, "/")[2], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	recDeleteNamespace(t, c, doomed)

	// Resumed within kept: it finishes, restarts nothing outside kept, and warns.
	since := time.Now()
	events, _, err := revUpgrade(ctx, c, func(a *action.RevisionUpgrade) {
		batchOfOne(a)
		a.Migrate.Namespaces = []string{kept}
	})
	if err != nil {
		t.Fatalf("the resumed run: %v\n%s", err, messages(events, event.Warning))
	}
	want := map[string]event.SkipReason{gone: event.SkipDeleted, "Namespace/" + doomed: event.SkipDeleted,
		"Deployment/" + doomed + "/w0": event.SkipDeleted}
	for _, w := range outside {
		if w != done {
			want[w] = event.SkipOutsideNamespaces
		}
	}
	if got := recSkipped(events); !maps.Equal(got, want) {
		t.Errorf("the resumed run skipped %v, want %v", got, want)
	}
	if d := lastDone(t, events); d.Result != event.RunSucceeded {
		t.Errorf("the resumed run's done: %+v", d)
	}
	recOn(t, c, []string{"Deployment/" + kept + "/w0"}, "b")
	if now := revUIDs(t, c, outside); !maps.Equal(now, before) {
		t.Errorf("the resume within %s restarted pods outside it: %v, then %v", kept, before, now)
	}
	recNoWritesOutside(t, c, since, kept, doomed)

	// Rolled back: it finishes, warns about the deleted Deployment and namespace, returns
	// every pod left to a, and creates no namespace.
	since = time.Now()
	events, _, err = revUpgrade(ctx, c, func(a *action.RevisionUpgrade) {
		a.Spec.Sets, a.Rollback = nil, true
		a.Migrate = action.MigrateOptions{BatchSize: 1}
	})
	if err != nil {
		t.Fatalf("the rollback: %v\n%s", err, messages(events, event.Warning))
	}
	if d := lastDone(t, events); d.Operation != event.OperationRollback || d.Result != event.RunSucceeded {
		t.Errorf("the rollback's done: %+v", d)
	}
	want = map[string]event.SkipReason{gone: event.SkipDeleted, "Namespace/" + doomed: event.SkipDeleted,
		"Deployment/" + doomed + "/w0": event.SkipDeleted}
	if got := recSkipped(events); !maps.Equal(got, want) {
		t.Errorf("the rollback skipped %v, want %v", got, want)
	}
	recOn(t, c, append([]string{"Deployment/" + kept + "/w0"}, outside...), "a")
	n, err := c.Kube.CoreV1().Namespaces().Get(ctx, kept, metav1.GetOptions{})
	if err != nil || n.Labels["istio.io/rev"] != "a" {
		t.Errorf("namespace %s after the rollback: %v, %v; want istio.io/rev=a", kept, n.Labels, err)
	}
	recNoWritesOutside(t, c, since, "", doomed)
	if _, err := c.Kube.CoreV1().Namespaces().Get(ctx, doomed, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted namespace %s exists again: %v", doomed, err)
	}
	if _, err := c.Kube.CoreV1().ConfigMaps("istio-system").Get(ctx, migrate.RecordName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the record after the rollback: %v", err)
	}
}

// recOn waits until each workload (Deployment/ns/name) runs one pod, injected by rev.
func recOn(t *testing.T, c *cluster.Cluster, ws []string, rev string) {
	t.Helper()
	harness.Eventually(t, 90*time.Second, "every pod on revision "+rev, func() (bool, string) {
		for _, w := range ws {
			parts := strings.Split(w, "/")
			l, err := c.Kube.CoreV1().Pods(parts[1]).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + parts[2]})
			if err != nil {
				return false, err.Error()
			}
			var revs []string
			for _, p := range l.Items {
				if p.DeletionTimestamp == nil {
					revs = append(revs, revPodOf(&p).rev)
				}
			}
			if !slices.Equal(revs, []string{rev}) {
				return false, fmt.Sprintf("%s: pods on %v", w, revs)
			}
		}
		return true, ""
	})
}

// recDeleteNamespace deletes namespace ns and waits until it is gone.
func recDeleteNamespace(t *testing.T, c *cluster.Cluster, ns string) {
	t.Helper()
	ctx := context.Background()
	if err := c.Kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 2*time.Minute, ns+" is gone", func() (bool, string) {
		_, err := c.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// recSkipped are a run's skipped events: the reason by object.
func recSkipped(rec *event.Recorder) map[string]event.SkipReason {
	out := map[string]event.SkipReason{}
	for _, e := range rec.Of(event.Skipped) {
		out[e.Object] = e.SkipReason
	}
	return out
}

// recNoWritesOutside reads the audit log from since: no request may have written (create,
// update, patch) namespace doomed, and the revision upgrade's field manager may have
// written Deployments only in namespace within ("": anywhere), never in doomed.
func recNoWritesOutside(t *testing.T, c *cluster.Cluster, since time.Time, within, doomed string) {
	t.Helper()
	revAudit(t, c, since, func(e revAuditEntry) {
		if e.Verb != "create" && e.Verb != "update" && e.Verb != "patch" {
			return
		}
		if e.ObjectRef.Resource == "namespaces" && (e.ObjectRef.Name == doomed || strings.Contains(e.RequestURI, "/namespaces/"+doomed)) {
			t.Errorf("a %s of the deleted namespace %s: %s", e.Verb, doomed, e.RequestURI)
		}
		if e.ObjectRef.Resource != "deployments" || !strings.Contains(e.RequestURI, "fieldManager="+migrate.FieldManager) {
			return
		}
		if (within != "" && e.ObjectRef.Namespace != within) || e.ObjectRef.Namespace == doomed {
			t.Errorf("a restart of Deployment %s/%s (within %q): %s", e.ObjectRef.Namespace, e.ObjectRef.Name, within, e.RequestURI)
		}
	})
}

// revFromA is the shared cluster purged, with revision a (minimal, 1.29.4) installed and
// the default tag on it; the upgrade record goes at the end.
func revFromA(t *testing.T) *cluster.Cluster {
	t.Helper()
	c := purged(t)
	c.RequireRealIstiod(t)
	t.Cleanup(func() {
		_ = c.Kube.CoreV1().ConfigMaps("istio-system").Delete(context.Background(), migrate.RecordName, metav1.DeleteOptions{})
	})
	revMustInstall(t, c, "1.29.4", "a", "profile=minimal")
	revTag(t, c, "default", "a")
	return c
}
