package action

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// TestRenderRecordRoundTrip: the spec a record keeps resolves to the same tree and renders
// the same objects as the spec it was dumped from.
func TestRenderRecordRoundTrip(t *testing.T) {
	cfg := &Config{}
	for _, sets := range [][]string{
		{"profile=demo"},
		{"profile=minimal", "revision=canary", "values.global.logging.level=default:debug", "components.pilot.k8s.replicaCount=3"},
	} {
		res, manifests, err := cfg.render(spec.Options{Sets: sets}, false)
		if err != nil {
			t.Fatal(err)
		}
		y, err := spec.YAML(res.Tree)
		if err != nil {
			t.Fatal(err)
		}
		rec := &history.Record{Number: 4, Revision: history.Rev(res.IOP.Spec.Revision), Spec: string(y)}
		again, manifests2, err := cfg.renderRecord(rec)
		if err != nil {
			t.Fatalf("%v: %v", sets, err)
		}
		if !reflect.DeepEqual(res.Tree, again.Tree) || res.Profile != again.Profile {
			t.Errorf("%v: the record's spec resolves differently", sets)
		}
		ids, _ := identities(manifests)
		ids2, _ := identities(manifests2)
		if !reflect.DeepEqual(ids, ids2) {
			t.Errorf("%v: renders other objects:\n%v\n%v", sets, ids, ids2)
		}
	}

	// A record of another revision than its spec says, or without a spec, is refused.
	const iop = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\n"
	if _, _, err := cfg.renderRecord(&history.Record{Number: 2, Revision: "canary", Spec: iop + "spec: {profile: minimal}\n"}); err == nil || !strings.Contains(err.Error(), "names revision default, not canary") {
		t.Errorf("edited record: %v", err)
	}
	if _, _, err := cfg.renderRecord(&history.Record{Number: 2, Revision: "default"}); err == nil || !strings.Contains(err.Error(), "holds no spec") {
		t.Errorf("empty record: %v", err)
	}
	if _, _, err := cfg.renderRecord(&history.Record{Number: 2, Revision: "default", Spec: iop + "spec: {profile: no-such}\n"}); err == nil || !strings.Contains(err.Error(), "install record 2 of revision default does not resolve") {
		t.Errorf("bad spec: %v", err)
	}
}

// TestDoneEvent: the run's last event, as the protocol finishes it, says what kind of run
// ended and how (its stream's status and exit code), so that the printers never say
// "Installation complete" after a rollback or a failure.
func TestDoneEvent(t *testing.T) {
	res := &install.Result{Changes: []install.Change{{Action: install.Created}, {Action: install.Unchanged}, {Action: install.Unchanged},
		{Action: install.Pruned}, {Action: install.Pruned}, {Action: install.Pruned}}}
	out := &InstallResult{Applied: res.Applied(), Unchanged: res.Unchanged(), Pruned: res.Pruned()}
	plan := &InstallPlan{}
	for _, tc := range []struct {
		name            string
		a               *Install
		err             error
		status, message string
		errText         string
		code            int
	}{
		{"install", &Install{}, nil, "", "1 applied, 2 unchanged, 3 pruned", "", 0},
		{"dry run", &Install{DryRun: true}, nil, "dry-run", "1 would be applied, 2 unchanged, 3 would be pruned", "", 0},
		{"failed install", &Install{}, errString("boom"), "", "", "boom", 1},
		{"interrupted", &Install{}, &install.InterruptedError{Applied: 1}, "interrupted", "", "interrupted: 1 objects applied", 130},
		{"interrupted pruning", &Install{}, &install.InterruptedError{Applied: 1, Pruning: true, Pruned: 2, Stale: 5}, "interrupted", "",
			"interrupted while pruning: 1 objects applied, 2 of 5 stale objects pruned", 130},
		{"rollback", &Install{rollbackOf: 3}, nil, "rollback", "record 3: 1 applied, 2 unchanged, 3 pruned", "", 0},
		{"failed rollback", &Install{rollbackOf: 3}, errString("boom"), "rollback", "record 3", "boom", 1},
		{"dry-run rollback", &Install{DryRun: true, rollbackOf: 3}, nil, "dry-run", "1 would be applied, 2 unchanged, 3 would be pruned", "", 0},
		{"interrupted rollback", &Install{rollbackOf: 3}, &install.InterruptedError{}, "interrupted", "", "interrupted: 0 objects applied", 130},
	} {
		rec := &event.Recorder{}
		r := &run{events: rec, dryRun: tc.a.DryRun}
		r.finish(tc.a.doneEvent(plan, out, tc.err), tc.err)
		e := rec.Events[0]
		var w struct{ Status string }
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(b, &w)
		if w.Status != tc.status || e.Message != tc.message || !strings.HasPrefix(e.Error, tc.errText) || (tc.errText == "") != (e.Error == "") ||
			e.ExitCode == nil || *e.ExitCode != tc.code {
			t.Errorf("%s: %s", tc.name, b)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
