package action_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/kubeflags"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

func TestMain(m *testing.M) { cluster.Main(m) }

// config is what a command would give the actions, for the test cluster.
func config(c *cluster.Cluster) *action.Config {
	return &action.Config{Kube: &kubeflags.Flags{Kubeconfig: c.Kubeconfig, Timeout: kubeflags.DefaultTimeout}, Version: "1.30.0"}
}

type summary struct {
	Number     int
	Action     string
	Outcome    history.Outcome
	Profile    string
	RollbackOf int
}

func records(t *testing.T, c *cluster.Cluster) []summary {
	t.Helper()
	rs, err := (&action.History{Config: config(c)}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []summary
	for _, r := range rs {
		out = append(out, summary{r.Number, r.Action, r.Outcome, r.Profile, r.RollbackOf})
	}
	return out
}

func sameRecords(t *testing.T, step string, got, want []summary) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: records\n got %+v\nwant %+v", step, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: records\n got %+v\nwant %+v", step, got, want)
		}
	}
}

// lastDone is the last done event of a run.
func lastDone(t *testing.T, rec *event.Recorder) event.Event {
	t.Helper()
	d := rec.Of(event.Done)
	if len(d) == 0 {
		t.Fatalf("no done event in %+v", rec.Events)
	}
	return d[len(d)-1]
}

// TestLifecycleE2E drives the lifecycle from code, with no command layer: install default,
// upgrade to demo, an upgrade that fails readiness with Atomic (the cluster is restored),
// rollback to the first record, and uninstall, checking the cluster and each result.
func TestLifecycleE2E(t *testing.T) {
	c := cluster.Get(t)
	ctx := context.Background()
	purge := &action.Uninstall{Config: config(c), Purge: true, Timeout: 2 * time.Minute}
	if _, err := purge.Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = (&action.Uninstall{Config: config(c), Purge: true, Timeout: 2 * time.Minute}).Run(context.Background(), nil)
	})
	deployment := func(name string) (nodeSelector map[string]string, ready bool, found bool) {
		d, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, false, false
		}
		if err != nil {
			t.Fatal(err)
		}
		return d.Spec.Template.Spec.NodeSelector, d.Status.ReadyReplicas >= 1 && d.Status.UpdatedReplicas == d.Status.Replicas, true
	}
	install := func(atomic bool, sets ...string) (*action.InstallResult, *event.Recorder, error) {
		rec := &event.Recorder{}
		in := &action.Install{Config: config(c), Spec: spec.Options{Sets: sets}, ReadinessTimeout: 2 * time.Minute,
			HistoryMax: action.DefaultHistoryMax, Atomic: atomic, Events: rec}
		if atomic {
			in.ReadinessTimeout = 6 * time.Second
		}
		res, err := in.Run(ctx, nil)
		return res, rec, err
	}

	// 1. Install default.
	res, rec, err := install(false, "profile=default")
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied < 30 || res.Record != 1 || lastDone(t, rec).Message == "" {
		t.Errorf("install: %+v, done %+v", res, lastDone(t, rec))
	}
	if _, ready, found := deployment("istiod"); !found || !ready {
		t.Errorf("istiod after install: found %v, ready %v", found, ready)
	}
	if _, _, found := deployment("istio-egressgateway"); found {
		t.Error("the default profile installed an egress gateway")
	}
	sameRecords(t, "install", records(t, c), []summary{{1, history.ActionInstall, history.Succeeded, "default", 0}})

	// 2. Upgrade to demo.
	res, _, err = install(false, "profile=demo")
	if err != nil {
		t.Fatal(err)
	}
	if res.Record != 2 || res.Applied == 0 {
		t.Errorf("upgrade: %+v", res)
	}
	if _, ready, found := deployment("istio-egressgateway"); !found || !ready {
		t.Errorf("egress gateway after the upgrade to demo: found %v, ready %v", found, ready)
	}

	// 3. An upgrade whose istiod cannot be scheduled, with Atomic: record 2 is restored.
	_, rec, err = install(true, "profile=demo", "components.pilot.k8s.nodeSelector.no-such-node=x")
	if err == nil || !strings.Contains(err.Error(), "--atomic restored revision default to record 2 (profile demo)") {
		t.Fatalf("failed atomic upgrade: %v", err)
	}
	if ns, ready, found := deployment("istiod"); !found || !ready || len(ns) != 0 {
		t.Errorf("istiod not restored: found %v, ready %v, nodeSelector %v", found, ready, ns)
	}
	dones := rec.Of(event.Done)
	if len(dones) != 2 || dones[0].Error == "" || dones[1].Operation != event.OperationRollback || !strings.HasPrefix(dones[1].Message, "record 2: ") {
		t.Errorf("done events of the failed upgrade and its restore: %+v", dones)
	}
	sameRecords(t, "atomic", records(t, c), []summary{
		{1, history.ActionInstall, history.Succeeded, "default", 0},
		{2, history.ActionInstall, history.Succeeded, "demo", 0},
		{3, history.ActionInstall, history.RolledBack, "demo", 0},
		{4, history.ActionRollback, history.Succeeded, "demo", 2},
	})

	// 4. Roll back to record 1: the demo-only egress gateway is pruned.
	rb := &action.Rollback{Config: config(c), Number: 1, ReadinessTimeout: 2 * time.Minute, HistoryMax: action.DefaultHistoryMax}
	plan, err := rb.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Target.Number != 1 || plan.Target.Profile != "default" || !contains(plan.Install.Stale, "Deployment/istio-system/istio-egressgateway") {
		t.Errorf("rollback plan: target %d %s, stale %v", plan.Target.Number, plan.Target.Profile, plan.Install.Stale)
	}
	res, err = rb.Run(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	if res.Pruned == 0 || res.Record != 5 {
		t.Errorf("rollback: %+v", res)
	}
	if _, _, found := deployment("istio-egressgateway"); found {
		t.Error("the rollback to the default profile left the egress gateway")
	}
	got := records(t, c)
	if len(got) != 5 || got[4] != (summary{5, history.ActionRollback, history.Succeeded, "default", 1}) {
		t.Errorf("records after the rollback: %+v", got)
	}

	// 5. Uninstall the revision: its control plane and records go, the CRDs stay.
	u := &action.Uninstall{Config: config(c), Spec: spec.Options{Revision: "default"}, Timeout: 2 * time.Minute}
	up, err := u.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !contains(up.Targets, "Deployment/istio-system/istiod") || up.Revision != "default" {
		t.Errorf("uninstall plan: %+v", up)
	}
	if _, err := u.Run(ctx, up); err != nil {
		t.Fatal(err)
	}
	if _, _, found := deployment("istiod"); found {
		t.Error("istiod survived the uninstall")
	}
	if got := records(t, c); len(got) != 0 {
		t.Errorf("records survived the uninstall: %+v", got)
	}
	if _, err := c.Kube.Discovery().ServerResourcesForGroupVersion("networking.istio.io/v1"); err != nil {
		t.Errorf("the uninstall of one revision removed the CRDs: %v", err)
	}
}

// TestPlanThenRunE2E: Plan, then a change to the cluster, then Run. With Replan (a plan a
// person looked at) Run stops, naming the change and writing nothing; Run without a plan
// applies the current truth.
func TestPlanThenRunE2E(t *testing.T) {
	c := cluster.Get(t)
	ctx := context.Background()
	if _, err := (&action.Uninstall{Config: config(c), Purge: true, Timeout: 2 * time.Minute}).Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = (&action.Uninstall{Config: config(c), Purge: true, Timeout: 2 * time.Minute}).Run(context.Background(), nil)
	})
	in := &action.Install{Config: config(c), Spec: spec.Options{Sets: []string{"profile=minimal"}}, ReadinessTimeout: 2 * time.Minute,
		HistoryMax: action.DefaultHistoryMax}
	if _, err := in.Run(ctx, nil); err != nil {
		t.Fatal(err)
	}

	// A re-install's plan foresees no write.
	in.Replan = true
	plan, err := in.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := plan.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range changes {
		if ch.Action != "unchanged" {
			t.Errorf("re-install plan: %s %s", ch.Object, ch.Action)
		}
	}
	if len(changes) < 20 || len(plan.Stale) != 0 {
		t.Errorf("re-install plan: %d changes, stale %v", len(changes), plan.Stale)
	}

	// Someone deletes the mesh config between the plan and the run.
	if err := c.Kube.CoreV1().ConfigMaps("istio-system").Delete(ctx, "istio", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deploy, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &event.Recorder{}
	in.Events = rec
	_, err = in.Run(ctx, plan)
	var changed *action.PlanChangedError
	if !errors.As(err, &changed) || !strings.Contains(err.Error(), "ConfigMap/istio-system/istio: planned unchanged, now create") ||
		!strings.Contains(err.Error(), "Nothing was written") {
		t.Fatalf("Run of a plan the cluster changed under: %v", err)
	}
	if len(rec.Events) != 0 {
		t.Errorf("the stopped run emitted events: %+v", rec.Events)
	}
	after, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != deploy.ResourceVersion {
		t.Error("the stopped run wrote istiod")
	}
	if _, err := c.Kube.CoreV1().ConfigMaps("istio-system").Get(ctx, "istio", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the stopped run wrote the ConfigMap: %v", err)
	}

	// Run without a plan plans now: it applies the current truth.
	in.Replan = false
	res, err := in.Run(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied != 1 {
		t.Errorf("the run after the change applied %d objects, want 1 (the ConfigMap)", res.Applied)
	}
	if _, err := c.Kube.CoreV1().ConfigMaps("istio-system").Get(ctx, "istio", metav1.GetOptions{}); err != nil {
		t.Errorf("the mesh config was not applied again: %v", err)
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}
