package action

import (
	"reflect"
	"strings"
	"testing"

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
		y, err := spec.Dump(res.Tree, "", spec.FormatYAML)
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

// TestDoneEvent: the run's last event says what kind of run ended and how, so that the
// printers never say "Installation complete" after a rollback or a failure.
func TestDoneEvent(t *testing.T) {
	res := &install.Result{Changes: []install.Change{{Action: install.Created}, {Action: install.Unchanged}, {Action: install.Unchanged},
		{Action: install.Pruned}, {Action: install.Pruned}, {Action: install.Pruned}}}
	inst := &history.Record{Action: history.ActionInstall}
	rb := &history.Record{Action: history.ActionRollback, RollbackOf: 3}
	for _, tc := range []struct {
		name            string
		a               *Install
		rec             *history.Record
		err             error
		status, message string
		errText         string
	}{
		{"install", &Install{}, inst, nil, "", "1 applied, 2 unchanged, 3 pruned", ""},
		{"dry run", &Install{DryRun: true}, inst, nil, "dry-run", "1 would be applied, 2 unchanged, 3 would be pruned", ""},
		{"failed install", &Install{}, inst, errString("boom"), "", "", "boom"},
		{"interrupted", &Install{}, inst, &install.InterruptedError{Applied: 1}, "interrupted", "", "interrupted: 1 objects applied"},
		{"rollback", &Install{}, rb, nil, "rollback", "record 3: 1 applied, 2 unchanged, 3 pruned", ""},
		{"failed rollback", &Install{}, rb, errString("boom"), "rollback", "record 3", "boom"},
		{"dry-run rollback", &Install{DryRun: true}, rb, nil, "dry-run", "1 would be applied, 2 unchanged, 3 would be pruned", ""},
		{"interrupted rollback", &Install{}, rb, &install.InterruptedError{}, "interrupted", "", "interrupted: 0 objects applied"},
	} {
		e := tc.a.doneEvent(res, tc.err, tc.rec, "install")
		if e.Status != tc.status || e.Message != tc.message || !strings.HasPrefix(e.Error, tc.errText) || (tc.errText == "") != (e.Error == "") {
			t.Errorf("%s: %+v", tc.name, e)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
