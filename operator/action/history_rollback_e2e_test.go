package action_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

const histEgress = "Deployment/istio-system/istio-egressgateway"

// histDeployment is the istio-system Deployment name, nil when there is none.
func histDeployment(t *testing.T, c *cluster.Cluster, name string) *appsv1.Deployment {
	t.Helper()
	d, err := c.Kube.AppsV1().Deployments("istio-system").Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// histVerify runs verify-install: against the spec of sets, or without any, against what
// the labels say is installed.
func histVerify(t *testing.T, c *cluster.Cluster, sets ...string) {
	t.Helper()
	v := action.Verify(config(c))
	if len(sets) > 0 {
		v.Spec = &spec.Options{Sets: sets}
	}
	res, err := v.Run(context.Background())
	if err != nil {
		t.Fatalf("verify-install %v: %v", sets, err)
	}
	if res.Failed || res.Report.Summary.Errors != 0 {
		t.Errorf("verify-install %v: %+v", sets, res.Report.Results)
	}
}

// histHistory is the install records of rev ("" for every revision).
func histHistory(t *testing.T, c *cluster.Cluster, rev string) []*history.Record {
	t.Helper()
	rs, err := (&action.History{Config: config(c), Revision: rev}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// histRollback rolls the default revision back to record n (0: the previous successful one).
func histRollback(c *cluster.Cluster, n int, dryRun bool) (*action.InstallResult, *event.Recorder, error) {
	rec := &event.Recorder{}
	rb := &action.Rollback{Config: config(c), Number: n, DryRun: dryRun, ReadinessTimeout: 2 * time.Minute,
		HistoryMax: action.DefaultHistoryMax, Events: rec}
	res, err := rb.Run(context.Background(), nil)
	return res, rec, err
}

// histPruned says whether rec holds a pruned event of object.
func histPruned(rec *event.Recorder, object string) bool {
	for _, e := range rec.Of(event.Pruned) {
		if e.Object == object && e.Action == event.ActionPruned {
			return true
		}
	}
	return false
}

// TestHistoryRollbackE2E: default, then demo, then rollback (TestLifecycleE2E proves the
// plan's prune and that an uninstall takes the records). A rollback to a record that does
// not exist is refused, a dry run changes nothing; a rollback stopped (Ctrl-C) at its first
// pruned object exits 130 and is recorded interrupted; the same rollback again (no record
// named: it finishes the stopped one, to record 1, not back to demo) prunes every egress
// object, verify-install passes and the history holds four complete records.
func TestHistoryRollbackE2E(t *testing.T) {
	c := purged(t)
	ctx := context.Background()
	if got := records(t, c); len(got) != 0 {
		t.Fatalf("records survived the purge: %+v", got)
	}
	installWith(t, c, action.Install{HistoryMax: action.DefaultHistoryMax}, "profile=default")
	installWith(t, c, action.Install{HistoryMax: action.DefaultHistoryMax}, "profile=demo")
	if histDeployment(t, c, "istio-egressgateway") == nil {
		t.Fatal("demo installed no egress gateway")
	}

	if _, _, err := histRollback(c, 9, false); err == nil || !strings.Contains(err.Error(), "no install record 9 of revision default (it has 1, 2)") {
		t.Errorf("rollback to record 9: %v", err)
	}
	_, rec, err := histRollback(c, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if !histPruned(rec, histEgress) || !lastDone(t, rec).DryRun {
		t.Errorf("the dry run does not foresee the egress gateway's prune: %+v", rec.Events)
	}
	if histDeployment(t, c, "istio-egressgateway") == nil || len(records(t, c)) != 2 {
		t.Fatal("the dry run changed the cluster or the history")
	}

	// Ctrl-C (its context cancelled) at the rollback's first pruned object: it stops between
	// deletes, exit code 130, its record says interrupted; the same rollback again finishes.
	stopCtx, stop := context.WithCancel(ctx)
	stopped := &event.Recorder{}
	rb := &action.Rollback{Config: config(c), ReadinessTimeout: 2 * time.Minute, HistoryMax: action.DefaultHistoryMax,
		Events: event.SinkFunc(func(e event.Event) {
			stopped.Emit(e)
			if e.Type == event.Pruned {
				stop()
			}
		})}
	_, err = rb.Run(stopCtx, nil)
	stop()
	if code := event.ExitCode(err); code != event.ExitInterrupted || len(stopped.Of(event.Pruned)) == 0 || !strings.Contains(err.Error(), "Run the same rollback again") {
		t.Fatalf("the rollback stopped at its first pruned object: exit code %d (%v), %d pruned; want %d, and the same rollback named", code, err, len(stopped.Of(event.Pruned)), event.ExitInterrupted)
	}

	_, rec, err = histRollback(c, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if done := lastDone(t, rec); !(histPruned(rec, histEgress) || histPruned(stopped, histEgress)) || done.Operation != event.OperationRollback ||
		done.Result != event.RunSucceeded || !strings.HasPrefix(done.Message, "record 1: ") {
		t.Errorf("rollback events: pruned %+v, done %+v", rec.Of(event.Pruned), done)
	}
	if histDeployment(t, c, "istio-egressgateway") != nil {
		t.Error("the egress gateway survived the rollback to the default profile")
	}
	histNoEgressLeft(t, c)
	histVerify(t, c, "profile=default")
	histVerify(t, c) // from the labels: nothing left over from demo

	sameRecords(t, "rollback", records(t, c), []summary{
		{1, history.ActionInstall, history.Succeeded, "default", 0},
		{2, history.ActionInstall, history.Succeeded, "demo", 0},
		{3, history.ActionRollback, history.Interrupted, "default", 1},
		{4, history.ActionRollback, history.Succeeded, "default", 1},
	})
	rs := histHistory(t, c, "")
	for _, r := range rs {
		if r.ToolVersion == "" || r.Time.IsZero() || !strings.Contains(r.Spec, "profile: "+r.Profile) || len(r.Objects) < 30 || r.Revision != "default" {
			t.Errorf("record %d incomplete: %+v", r.Number, r)
		}
		// history -o name names these Secrets (pkg/printer).
		name := history.SecretName(r.Revision, r.Number)
		if _, err := c.Kube.CoreV1().Secrets("istio-system").Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("record %d's Secret %s: %v", r.Number, name, err)
		}
	}
	if len(rs) == 4 && !strings.Contains(rs[3].Description, "rollback to 1 complete") {
		t.Errorf("the rollback's record says %q", rs[3].Description)
	}
	if rs := histHistory(t, c, "canary"); len(rs) != 0 {
		t.Errorf("records of revision canary: %+v", rs)
	}
}

// histNoEgressLeft fails when an egress gateway Service or ServiceAccount is left.
func histNoEgressLeft(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	svcs, err := c.Kube.CoreV1().Services("istio-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sas, err := c.Kube.CoreV1().ServiceAccounts("istio-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range svcs.Items {
		names = append(names, "Service "+s.Name)
	}
	for _, s := range sas.Items {
		names = append(names, "ServiceAccount "+s.Name)
	}
	for _, n := range names {
		if strings.Contains(n, "egressgateway") {
			t.Errorf("%s survived the rollback", n)
		}
	}
}
