package history

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

func gunzip(t *testing.T, b []byte) string {
	t.Helper()
	return string(fixture.Gunzipped(t, b))
}

func TestEncodeDecode(t *testing.T) {
	many := make([]ObjectRef, MaxObjects+5)
	for i := range many {
		many[i] = ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "cm"}
	}
	when := time.Date(2026, 11, 29, 19, 15, 27, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		in          Record
		wantObjects int
		wantOmitted int
		wantErr     error
	}{
		{name: "empty", in: Record{}},
		{name: "full", in: Record{Number: 3, Revision: "canary", Time: when, ToolVersion: "1.30.0", Action: ActionRollback,
			Outcome: Succeeded, RollbackOf: 1, Description: "rollback to 1", Profile: "demo", Spec: "spec:\n  profile: demo\n",
			Objects: []ObjectRef{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "istio-system", Name: "istiod"}}},
			wantObjects: 1},
		{name: "identities cut beyond the limit", in: Record{Objects: many}, wantObjects: MaxObjects, wantOmitted: 5},
		{name: "a spec that does not fit", in: Record{Spec: randomText(MaxPayload * 2)}, wantErr: ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Encode(&tc.in)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), "KiB limit") {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > MaxPayload {
				t.Errorf("payload %d bytes", len(b))
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Objects) != tc.wantObjects || got.ObjectsOmitted != tc.wantOmitted {
				t.Errorf("objects %d omitted %d, want %d and %d", len(got.Objects), got.ObjectsOmitted, tc.wantObjects, tc.wantOmitted)
			}
			if tc.wantOmitted == 0 {
				want := tc.in
				if len(want.Objects) == 0 {
					want.Objects = nil
				}
				if !reflect.DeepEqual(*got, want) {
					t.Errorf("round trip:\n got %+v\nwant %+v", *got, want)
				}
			}
			if tc.wantOmitted > 0 && len(tc.in.Objects) != len(many) {
				t.Error("Encode changed its argument")
			}
		})
	}
	for _, bad := range [][]byte{nil, []byte("not gzip"), gzipped("{not json")} {
		if _, err := Decode(bad); err == nil || !strings.Contains(err.Error(), "decoding install record") {
			t.Errorf("Decode(%q): %v", bad, err)
		}
	}
}

func gzipped(s string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return buf.Bytes()
}

// randomText does not compress, unlike a repeated string.
func randomText(n int) string {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = 'a' + byte(x%26)
	}
	return string(b)
}

// TestNoSecretData: a record lists a rendered Secret by its identity only; neither its
// data nor its stringData, plain or base64, reaches the encoded record.
func TestNoSecretData(t *testing.T) {
	secret := fixture.Object(t, `
apiVersion: v1
kind: Secret
metadata: {name: cacerts, namespace: istio-system, annotations: {note: annotation-value-xyz}}
type: Opaque
data: {ca-key.pem: `+base64.StdEncoding.EncodeToString([]byte("PRIVATE-KEY-MATERIAL-123"))+`}
stringData: {token: plain-token-value-456}
`)
	cm := fixture.Object(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: istio, namespace: istio-system}, data: {mesh: config-body-789}}`)
	objs, omitted := Identities([]*unstructured.Unstructured{secret, cm})
	if omitted != 0 || len(objs) != 2 || objs[0].Ref().String() != "Secret/istio-system/cacerts" || objs[1].Kind != "ConfigMap" {
		t.Fatalf("identities: %v (%d omitted)", objs, omitted)
	}
	b, err := Encode(&Record{Number: 1, Objects: objs, Spec: "spec: {}\n"})
	if err != nil {
		t.Fatal(err)
	}
	plain := gunzip(t, b)
	for _, leak := range []string{"PRIVATE-KEY-MATERIAL-123", base64.StdEncoding.EncodeToString([]byte("PRIVATE-KEY-MATERIAL-123")),
		"plain-token-value-456", "config-body-789", "annotation-value-xyz", "ca-key.pem", "Opaque"} {
		if strings.Contains(plain, leak) || strings.Contains(string(b), leak) {
			t.Errorf("the record holds %q:\n%s", leak, plain)
		}
	}
	if !strings.Contains(plain, `"name":"cacerts"`) {
		t.Errorf("the record lacks the Secret's identity:\n%s", plain)
	}
}

func TestIdentitiesLimit(t *testing.T) {
	cm := fixture.Object(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}`)
	objs := make([]*unstructured.Unstructured, MaxObjects+3)
	for i := range objs {
		objs[i] = cm
	}
	ids, omitted := Identities(objs)
	if len(ids) != MaxObjects || omitted != 3 {
		t.Errorf("%d identities, %d omitted", len(ids), omitted)
	}
}

func TestSetDescription(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"install complete", "install complete"},
		{"  Istiod: not ready within the readiness timeout (5m0s):\n  Deployment/istio-system/istiod (unschedulable)", "Istiod: not ready within the readiness timeout (5m0s): Deployment/istio-system/istiod (unschedulable)"},
		{strings.Repeat("x", 400), strings.Repeat("x", maxDescription-3) + "..."},
	} {
		var r Record
		r.SetDescription(tc.in)
		if r.Description != tc.want {
			t.Errorf("SetDescription(%q) = %q, want %q", tc.in, r.Description, tc.want)
		}
	}
}

func records(outcomes ...Outcome) []*Record {
	var out []*Record
	for i, o := range outcomes {
		out = append(out, &Record{Number: i + 1, Revision: "default", Outcome: o})
	}
	return out
}

// rollbackOf makes the last of rs a rollback to record n.
func rollbackOf(rs []*Record, n int) []*Record {
	rs[len(rs)-1].Action, rs[len(rs)-1].RollbackOf = ActionRollback, n
	return rs
}

func TestTarget(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      []*Record
		n       int
		want    int
		wantErr string
	}{
		{name: "none", in: nil, wantErr: "no install records"},
		{name: "only the current one", in: records(Succeeded), wantErr: "no earlier successful"},
		{name: "the one before the current", in: records(Succeeded, Succeeded), want: 1},
		{name: "failed ones are skipped", in: records(Succeeded, Failed, RolledBack, Succeeded), want: 1},
		{name: "after a failure, the last good one", in: records(Succeeded, Succeeded, Failed), want: 2},
		{name: "a rollback toggles back", in: records(Succeeded, Succeeded, Succeeded), want: 2},
		{name: "nothing good", in: records(Failed, Removed), wantErr: "no earlier successful"},
		{name: "after an interrupted run, the last good one", in: records(Succeeded, Succeeded, Interrupted), want: 2},
		{name: "interrupted ones are skipped", in: records(Succeeded, Interrupted, Succeeded), want: 1},
		{name: "only interrupted", in: records(Interrupted, Interrupted), wantErr: "no earlier successful"},
		{name: "by number", in: records(Succeeded, Failed, Succeeded), n: 2, want: 2},
		{name: "an interrupted rollback is finished", in: rollbackOf(records(Succeeded, Succeeded, Interrupted), 1), want: 1},
		{name: "a failed rollback is finished", in: rollbackOf(records(Succeeded, Succeeded, Failed), 1), want: 1},
		{name: "a rollback to a record since failed: the last good one", in: rollbackOf(records(Failed, Succeeded, Interrupted), 1), want: 2},
		{name: "a rollback that succeeded toggles back", in: rollbackOf(records(Succeeded, Succeeded, Succeeded), 1), want: 2},
		{name: "a missing number", in: records(Succeeded, Succeeded), n: 7, wantErr: "no install record 7 of revision default (it has 1, 2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Target(tc.in, tc.n)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Number != tc.want {
				t.Errorf("target %d, want %d", got.Number, tc.want)
			}
		})
	}
}

// TestTargetAmongSealed: a forged record (unsealed) does not move the pick of the previous
// successful record; with no sealed pick, the unsealed one is picked (and refused by the
// caller, by name).
func TestTargetAmongSealed(t *testing.T) {
	sealed := func(rs []*Record, unsealed ...int) []*Record {
		for _, r := range rs {
			r.Trust = Sealed
			for _, n := range unsealed {
				if r.Number == n {
					r.Trust = Unsealed
				}
			}
		}
		return rs
	}
	for _, tc := range []struct {
		name string
		in   []*Record
		n    int
		want int
	}{
		{"a forged newest record", sealed(records(Succeeded, Succeeded, Succeeded, Succeeded), 4), 0, 2},
		{"a forged record between", sealed(records(Succeeded, Succeeded, Succeeded), 2), 0, 1},
		{"no sealed pick: the unsealed one", sealed(records(Succeeded, Succeeded), 1), 0, 1},
		{"all from before seals", sealed(records(Succeeded, Succeeded), 1, 2), 0, 1},
		{"by number, sealed or not", sealed(records(Succeeded, Succeeded, Succeeded), 3), 3, 3},
	} {
		got, err := Target(tc.in, tc.n)
		if err != nil || got.Number != tc.want {
			t.Errorf("%s: %v %v, want %d", tc.name, got, err, tc.want)
		}
	}
}

func TestLastSucceeded(t *testing.T) {
	if r := LastSucceeded(records(Succeeded, Succeeded, Failed)); r == nil || r.Number != 2 {
		t.Errorf("got %+v", r)
	}
	if r := LastSucceeded(records(Failed)); r != nil {
		t.Errorf("got %+v", r)
	}
}

func TestToTrim(t *testing.T) {
	for _, tc := range []struct {
		numbers     []int
		keep        int
		interrupted []int
		want        []int
	}{
		{nil, 10, nil, nil},
		{[]int{1, 2, 3}, 10, nil, nil},
		{[]int{1, 2, 3}, 3, nil, nil},
		{[]int{3, 1, 4, 2}, 2, nil, []int{1, 2}},
		{[]int{5, 6, 7}, 1, nil, []int{5, 6}},
		{[]int{1, 2, 3}, 0, nil, nil},
		{[]int{1, 2, 3}, -1, nil, nil},
		// Interrupted records do not count; they go once older than the oldest kept.
		{[]int{1, 2, 3, 4}, 2, []int{4}, []int{1}},
		{[]int{1, 2, 3, 4, 5}, 2, []int{2, 4, 5}, nil},
		{[]int{1, 2, 3, 4, 5}, 1, []int{2, 4, 5}, []int{1, 2}},
		{[]int{1, 2, 3}, 1, []int{1, 2, 3}, nil},
	} {
		skip := map[int]bool{}
		for _, n := range tc.interrupted {
			skip[n] = true
		}
		if got := ToTrim(tc.numbers, tc.keep, skip); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ToTrim(%v, %d, interrupted %v) = %v, want %v", tc.numbers, tc.keep, tc.interrupted, got, tc.want)
		}
	}
}

func TestNamesAndSelectors(t *testing.T) {
	if got := SecretName("", 3); got != "istioctl-install-default-v3" {
		t.Error(got)
	}
	if got := SecretName("canary", 12); got != "istioctl-install-canary-v12" {
		t.Error(got)
	}
	if got := Selector("canary"); got != "install.istio.io/record=true,app.kubernetes.io/managed-by=istioctl,istio.io/rev=canary" {
		t.Error(got)
	}
	if got := Selector(""); strings.Contains(got, "istio.io/rev") {
		t.Error(got)
	}
}

func TestRepeats(t *testing.T) {
	newest := &Record{Number: 2, Outcome: Succeeded, Spec: "a", ToolVersion: "1.30.0", Trust: Sealed}
	unsealed := &Record{Number: 2, Outcome: Succeeded, Spec: "a", ToolVersion: "1.30.0", Trust: Unsealed}
	older := &Record{Number: 1, Outcome: Succeeded, Spec: "b", ToolVersion: "1.30.0"}
	cases := []struct {
		name string
		rs   []*Record
		r    Record
		want bool
	}{
		{"same spec and version", []*Record{older, newest}, Record{Outcome: Succeeded, Spec: "a", ToolVersion: "1.30.0"}, true},
		{"no records", nil, Record{Outcome: Succeeded, Spec: "a", ToolVersion: "1.30.0"}, false},
		{"other spec", []*Record{older, newest}, Record{Outcome: Succeeded, Spec: "b", ToolVersion: "1.30.0"}, false},
		{"other version", []*Record{older, newest}, Record{Outcome: Succeeded, Spec: "a", ToolVersion: "1.31.0"}, false},
		{"this run failed", []*Record{older, newest}, Record{Outcome: Failed, Spec: "a", ToolVersion: "1.30.0"}, false},
		{"newest not sealed (forged, or from before seals)", []*Record{older, unsealed}, Record{Outcome: Succeeded, Spec: "a", ToolVersion: "1.30.0"}, false},
		{"newest failed", []*Record{older, {Number: 3, Outcome: Failed, Spec: "a", ToolVersion: "1.30.0"}}, Record{Outcome: Succeeded, Spec: "a", ToolVersion: "1.30.0"}, false},
	}
	for _, tc := range cases {
		if got := Repeats(tc.rs, &tc.r); got != tc.want {
			t.Errorf("%s: Repeats = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestObjectRefWireForm pins the identities' JSON as records on clusters hold it: a record
// an earlier istioctl wrote reads back, and one written now has the same bytes.
func TestObjectRefWireForm(t *testing.T) {
	const stored = `[{"group":"apps","version":"v1","kind":"Deployment","namespace":"istio-system","name":"istiod"},{"version":"v1","kind":"ClusterRole","name":"istiod"}]`
	var objs []ObjectRef
	if err := json.Unmarshal([]byte(stored), &objs); err != nil {
		t.Fatal(err)
	}
	want := []ref.Ref{{Group: "apps", Kind: "Deployment", Namespace: "istio-system", Name: "istiod"}, {Kind: "ClusterRole", Name: "istiod"}}
	for i, o := range objs {
		if o.Ref() != want[i] {
			t.Errorf("object %d: %#v, want %#v", i, o.Ref(), want[i])
		}
	}
	if b, err := json.Marshal(objs); err != nil || string(b) != stored {
		t.Errorf("written as %s (%v), want %s", b, err, stored)
	}
}

// TestTrustNotStored: what List judged is never written into a record, and a stored
// record's claim is not read back as a judgement of its own.
func TestTrustNotStored(t *testing.T) {
	b, err := Encode(&Record{Number: 1, Trust: Sealed})
	if err != nil {
		t.Fatal(err)
	}
	if s := gunzip(t, b); strings.Contains(s, "trust") {
		t.Errorf("stored: %s", s)
	}
}
