package printer

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
)

func TestHistory(t *testing.T) {
	when := time.Date(2026, 11, 29, 19, 15, 27, 0, time.Local)
	rs := []*history.Record{
		{Number: 1, Revision: "default", Time: when, Outcome: history.Succeeded, Trust: history.Sealed, Profile: "default", ToolVersion: "1.30.0", Description: "install complete"},
		{Number: 2, Revision: "default", Time: when, Outcome: history.RolledBack, Trust: history.Sealed, Profile: "demo", ToolVersion: "1.30.0"},
	}
	var buf bytes.Buffer
	if err := History(&buf, rs, Table); err != nil {
		t.Fatal(err)
	}
	want := `REVISION  RECORD  UPDATED              STATUS       TRUST   PROFILE  ISTIOCTL VERSION  DESCRIPTION
default   1       2026-11-29 19:15:27  succeeded    sealed  default  1.30.0            install complete
default   2       2026-11-29 19:15:27  rolled-back  sealed  demo     1.30.0            -
`
	if buf.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", buf.String(), want)
	}
	buf.Reset()
	if err := History(&buf, nil, JSON); err != nil || strings.TrimSpace(buf.String()) != "[]" {
		t.Errorf("empty JSON: %q %v", buf.String(), err)
	}
	buf.Reset()
	if err := History(&buf, rs, JSON); err != nil {
		t.Fatal(err)
	}
	var back []history.Record
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || len(back) != 2 || back[1].Outcome != history.RolledBack || back[1].Trust != history.Sealed {
		t.Errorf("JSON: %v %+v", err, back)
	}
}

// TestHistoryUntrusted: a record whose seal does not hold is marked in the table, said
// once under it, and carries its trust in the JSON.
func TestHistoryUntrusted(t *testing.T) {
	when := time.Date(2026, 11, 29, 19, 15, 27, 0, time.Local)
	rs := []*history.Record{
		{Number: 1, Revision: "default", Time: when, Outcome: history.Succeeded, Trust: history.Sealed, Profile: "default", ToolVersion: "1.31.0"},
		{Number: 98, Revision: "default", Time: when, Outcome: history.Succeeded, Trust: history.Changed, Profile: "default", ToolVersion: "1.31.0"},
		{Number: 99, Revision: "default", Time: when, Outcome: history.Succeeded, Trust: history.Unsealed, Profile: "demo", ToolVersion: "1.31.0"},
	}
	var buf bytes.Buffer
	if err := History(&buf, rs, Table); err != nil {
		t.Fatal(err)
	}
	want := `REVISION  RECORD  UPDATED              STATUS     TRUST                     PROFILE  ISTIOCTL VERSION  DESCRIPTION
default   1       2026-11-29 19:15:27  succeeded  sealed                    default  1.31.0            -
default   98      2026-11-29 19:15:27  succeeded  UNTRUSTED (seal differs)  default  1.31.0            -
default   99      2026-11-29 19:15:27  succeeded  UNTRUSTED (no seal)       demo     1.31.0            -

2 UNTRUSTED record(s): istioctl keeps a digest of every record it writes on the records' Namespace, and these have none, or one that differs (written or changed by another account, or by an istioctl from before seals). rollback, install --atomic and --pin-digests do not use them; see ` + check.DocsURL + `history.md#sealed-records.
`
	if buf.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", buf.String(), want)
	}
	buf.Reset()
	if err := History(&buf, rs, JSON); err != nil {
		t.Fatal(err)
	}
	var back []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || len(back) != 3 || back[2]["trust"] != "unsealed" || back[1]["trust"] != "changed" {
		t.Errorf("JSON: %v %v", err, back)
	}
}

func TestTextEvents(t *testing.T) {
	var buf bytes.Buffer
	s := NewEvents(&buf, Text)
	s.Emit(event.Event{Type: event.Warning, Message: "install failed; --atomic: restoring"})
	s.Emit(event.Event{Type: event.Warning, Object: "Deployment/ns/x", Message: "took over"})
	s.Emit(event.Event{Type: event.Done, Message: "record 1: 1 applied", RunEnd: event.RunEnd{Operation: event.OperationRollback, Result: event.RunSucceeded}})
	s.Emit(event.Event{Type: event.Done, Message: "record 1", Error: "boom", RunEnd: event.RunEnd{Operation: event.OperationRollback, Result: event.RunFailed}})
	want := "! install failed; --atomic: restoring\n! Deployment/ns/x: took over\n✔ Rollback to record 1: 1 applied\n✘ Rollback to record 1 failed\n"
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// TestTextPruned: with -v a pruned object's line, worded by its status ("would be pruned"
// in a dry run), "removed" without one.
func TestTextPruned(t *testing.T) {
	var buf bytes.Buffer
	s := NewEvents(&buf, Text, EventOptions{Objects: true})
	s.Emit(event.Event{Type: event.Pruned, Object: "Deployment/ns/egress", ObjectChange: event.ObjectChange{Status: "would be pruned", Action: event.ActionPruned}})
	s.Emit(event.Event{Type: event.Pruned, Object: "Deployment/ns/egress", ObjectChange: event.ObjectChange{Action: event.ActionPruned}})
	if want := "  Deployment/ns/egress would be pruned\n  Deployment/ns/egress removed\n"; buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// TestHistoryAfterRollback: the kubectl formats of the history operator/action's
// TestHistoryRollbackE2E leaves (default, demo, a rollback to 1); -o name names the
// records' Secrets.
func TestHistoryAfterRollback(t *testing.T) {
	rs := []*history.Record{
		{Number: 1, Revision: "default", Action: history.ActionInstall, Outcome: history.Succeeded, Profile: "default"},
		{Number: 2, Revision: "default", Action: history.ActionInstall, Outcome: history.Succeeded, Profile: "demo"},
		{Number: 3, Revision: "default", Action: history.ActionRollback, Outcome: history.Succeeded, Profile: "default", RollbackOf: 1},
	}
	for name, format := range map[string]string{
		"name":           "name",
		"jsonpath":       `jsonpath={range .items[*]}{.revision}/{.number} {.action} {.outcome} {.profile}{"\n"}{end}`,
		"custom-columns": "custom-columns=RECORD:.number,ACTION:.action,STATUS:.outcome,PROFILE:.profile,OF:.rollbackOf",
	} {
		var buf bytes.Buffer
		if err := History(&buf, rs, Format(format)); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "../../testdata/history/"+name+".txt", buf.Bytes())
	}
}
