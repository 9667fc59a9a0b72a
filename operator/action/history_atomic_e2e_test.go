package action_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// histBroken installs the default profile with Atomic and an istiod that cannot be
// scheduled: it fails readiness within 6 s (the readiness timeout is what it proves).
func histBroken(c *cluster.Cluster) (*event.Recorder, error) {
	rec := &event.Recorder{}
	in := &action.Install{Config: config(c), Spec: spec.Options{Sets: []string{"components.pilot.k8s.nodeSelector.no-such-node=x"}},
		ReadinessTimeout: 6 * time.Second, HistoryMax: action.DefaultHistoryMax, Atomic: true, Events: rec}
	_, err := in.Run(context.Background(), nil)
	return rec, err
}

// histHas says whether rec holds an event of typ whose field (by get) contains want.
func histHas(rec *event.Recorder, typ event.Type, get func(event.Event) string, want string) bool {
	for _, e := range rec.Of(typ) {
		if strings.Contains(get(e), want) {
			return true
		}
	}
	return false
}

func histMessage(e event.Event) string { return e.Message }

// TestInstallAtomicE2E: an install with Atomic whose istiod cannot be scheduled fails, and
// the previous install is restored and verified; the events say what failed and what was
// restored. Over an install without records nothing is restored or removed; without a
// previous install, Atomic removes the revision again.
func TestInstallAtomicE2E(t *testing.T) {
	c := purged(t)
	ctx := context.Background()
	installWith(t, c, action.Install{HistoryMax: action.DefaultHistoryMax}, "profile=default")

	rec, err := histBroken(c)
	if err == nil || event.ExitCode(err) == event.ExitOK {
		t.Fatalf("a failed atomic install succeeded: %v", err)
	}
	for _, want := range []string{"install failed, and --atomic restored revision default to record 1 (profile default)",
		"Istiod: not ready within the readiness timeout (6s)", "unschedulable"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	dones := rec.Of(event.Done)
	if !histHas(rec, event.ComponentFailed, func(e event.Event) string { return e.Component + ": " + e.Error }, "Pilot: not ready within the readiness timeout (6s)") ||
		!histHas(rec, event.Warning, histMessage, "install failed; --atomic: restoring revision default to record 1 (profile default") ||
		len(dones) != 2 || dones[0].Error == "" || dones[1].Operation != event.OperationRollback ||
		dones[1].Result != event.RunSucceeded || !strings.HasPrefix(dones[1].Message, "record 1: ") {
		t.Errorf("events of the failed install and its restore: %+v", rec.Events)
	}
	d := histDeployment(t, c, "istiod")
	if d == nil || len(d.Spec.Template.Spec.NodeSelector) != 0 || d.Status.ReadyReplicas < 1 || d.Status.UpdatedReplicas != d.Status.Replicas {
		t.Errorf("istiod not restored: %+v", d)
	}
	histVerify(t, c, "profile=default")
	sameRecords(t, "atomic", records(t, c), []summary{
		{1, history.ActionInstall, history.Succeeded, "default", 0},
		{2, history.ActionInstall, history.RolledBack, "default", 0},
		{3, history.ActionRollback, history.Succeeded, "default", 1},
	})
	rs := histHistory(t, c, "")
	if !strings.HasPrefix(rs[1].Description, "rolled back to 1 after: Istiod: not ready") ||
		!strings.Contains(rs[2].Description, "(--atomic, after 2 failed)") {
		t.Errorf("descriptions: %q, %q", rs[1].Description, rs[2].Description)
	}

	// Installed without records (as by an istioctl without install history): nothing to
	// restore, and nothing removed either.
	if err := c.Kube.CoreV1().Secrets("istio-system").DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: history.Selector("")}); err != nil {
		t.Fatal(err)
	}
	rec, err = histBroken(c)
	if err == nil || !strings.Contains(err.Error(), "--atomic had no install record of revision default to restore") ||
		!histHas(rec, event.Warning, histMessage, "the failed install is left as it is") {
		t.Errorf("atomic over an unrecorded install: %v\n%+v", err, rec.Of(event.Warning))
	}
	if histDeployment(t, c, "istiod") == nil {
		t.Error("atomic removed an install it had no record of")
	}

	// No earlier install: the revision's components go again (Base stays, as with uninstall).
	if _, err := (&action.Uninstall{Config: config(c), Spec: spec.Options{Revision: "default"}, Timeout: 2 * time.Minute}).Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	rec, err = histBroken(c)
	if err == nil || !strings.Contains(err.Error(), "--atomic removed revision default again") {
		t.Fatalf("atomic without a previous install: %v", err)
	}
	if len(rec.Of(event.Warning)) == 0 || !histHas(rec, event.Done, func(e event.Event) string { return string(e.Operation) }, string(event.OperationUninstall)) {
		t.Errorf("events of the removal: %+v", rec.Events)
	}
	if histDeployment(t, c, "istiod") != nil {
		t.Error("istiod survived the atomic removal")
	}
	if rs := histHistory(t, c, ""); len(rs) != 1 || rs[0].Outcome != history.Removed {
		t.Errorf("history: %+v", rs)
	}
}
