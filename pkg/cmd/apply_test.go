package cmd

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// TestRenderRecordRoundTrip: the spec a record keeps resolves to the same tree and renders
// the same objects as the spec it was dumped from.
func TestRenderRecordRoundTrip(t *testing.T) {
	for _, sets := range [][]string{
		{"profile=demo"},
		{"profile=minimal", "revision=canary", "values.global.logging.level=default:debug", "components.pilot.k8s.replicaCount=3"},
	} {
		f := SpecFlags{Sets: sets}
		res, manifests, err := f.render(nil, io.Discard, "", false)
		if err != nil {
			t.Fatal(err)
		}
		y, err := spec.Dump(res.Tree, "", spec.FormatYAML)
		if err != nil {
			t.Fatal(err)
		}
		rec := &history.Record{Number: 4, Revision: history.Rev(res.IOP.Spec.Revision), Spec: string(y)}
		again, manifests2, err := renderRecord(rec, io.Discard)
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
	if _, _, err := renderRecord(&history.Record{Number: 2, Revision: "canary", Spec: iop + "spec: {profile: minimal}\n"}, io.Discard); err == nil || !strings.Contains(err.Error(), "names revision default, not canary") {
		t.Errorf("edited record: %v", err)
	}
	if _, _, err := renderRecord(&history.Record{Number: 2, Revision: "default"}, io.Discard); err == nil || !strings.Contains(err.Error(), "holds no spec") {
		t.Errorf("empty record: %v", err)
	}
	if _, _, err := renderRecord(&history.Record{Number: 2, Revision: "default", Spec: iop + "spec: {profile: no-such}\n"}, io.Discard); err == nil || !strings.Contains(err.Error(), "install record 2 of revision default does not resolve") {
		t.Errorf("bad spec: %v", err)
	}
}

func TestRelabelDone(t *testing.T) {
	rec := &event.Recorder{}
	s := relabelDone{Sink: rec, status: "rollback", what: "record 3"}
	s.Emit(event.Event{Type: event.Done, Message: "1 applied, 2 unchanged, 3 pruned"})
	s.Emit(event.Event{Type: event.Done, Error: "boom"})
	s.Emit(event.Event{Type: event.Done, Status: "dry-run", Message: "x"})
	s.Emit(event.Event{Type: event.Applied, Message: "y"})
	got := rec.Events
	if got[0].Status != "rollback" || got[0].Message != "record 3: 1 applied, 2 unchanged, 3 pruned" ||
		got[1].Status != "rollback" || got[1].Message != "record 3" || got[1].Error != "boom" ||
		got[2].Status != "dry-run" || got[3].Status != "" {
		t.Errorf("%+v", got)
	}
}
