package cmd_test

import (
	"context"
	"testing"
	"time"

	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// historyOf returns the records `istioctl history -o json` lists.
func historyOf(t *testing.T, kubeconfig string, args ...string) []history.Record {
	t.Helper()
	out, stderr, err := harness.Run(t, append([]string{"--kubeconfig", kubeconfig, "history", "-o", "json"}, args...)...)
	if err != nil {
		t.Fatalf("history: %v\n%s\n%s", err, out, stderr)
	}
	var rs []history.Record
	if err := jsonUnmarshal(out, &rs); err != nil {
		t.Fatalf("history -o json: %v\n%s", err, out)
	}
	return rs
}

type recordSummary struct {
	Number     int
	Action     string
	Outcome    history.Outcome
	Profile    string
	RollbackOf int
}

func summaries(rs []history.Record) []recordSummary {
	var out []recordSummary
	for _, r := range rs {
		out = append(out, recordSummary{r.Number, r.Action, r.Outcome, r.Profile, r.RollbackOf})
	}
	return out
}

// TestRollbackCommandE2E: rollback's and history's command lines (operator/action's
// TestHistoryRollbackE2E proves the rollback itself): without -y off a terminal, a record
// that is not a number and an empty jsonpath template are usage errors that write nothing.
func TestRollbackCommandE2E(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	t.Setenv("HOME", t.TempDir())
	client := harness.Client(t, c)
	// Two records, written as installs write them: the rollback plans the first (reads
	// only) before it finds no terminal to ask on.
	const rev = "rbcmd"
	for range 2 {
		r := &history.Record{Revision: rev, Time: time.Now(), Action: history.ActionInstall, Outcome: history.Succeeded, Profile: "minimal",
			Spec: "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  profile: minimal\n  revision: " + rev + "\n"}
		if err := (&history.Store{Client: client, Namespace: ns}).Create(context.Background(), r, 0); err != nil {
			t.Fatal(err)
		}
	}
	harness.Settled(t, c) // the new namespace filled: AuditWrites counts only what the commands write
	before := harness.AuditWrites(t, c)
	for _, args := range [][]string{
		{"rollback", "-r", rev},
		{"rollback", "x", "-r", rev},
		{"history", "-o", "jsonpath="},
	} {
		out, stderr, err := harness.Run(t, append([]string{"--kubeconfig", c.Kubeconfig, "-i", ns}, args...)...)
		if !isUsage(err) {
			t.Errorf("istioctl %v: want a usage error, got %v\n%s\n%s", args, err, out, stderr)
		}
	}
	if w := harness.WritesBetween(before, harness.AuditWrites(t, c)); len(w) > 0 {
		t.Errorf("the refused commands wrote: %v", w)
	}
}
