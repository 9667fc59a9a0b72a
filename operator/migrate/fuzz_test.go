package migrate

import (
	"strings"
	"testing"
)

// FuzzDecodeRecord decodes arbitrary bytes as a revision upgrade's progress record (a
// ConfigMap anyone who may write ConfigMaps in the istio namespace can change): an error
// names the record; a record read re-encodes to one that reads and encodes the same; resuming it and
// rolling it back plan without a panic, a plan never counting more batches done than it has.
func FuzzDecodeRecord(f *testing.F) {
	w := func(ns, name string) Workload { return Workload{Namespace: ns, Kind: "Deployment", Name: name} }
	// Records as runs write them: one begun, one with tags, relabels and a deferred
	// workload, one finished.
	for _, r := range []*Record{
		{From: "a", To: "b", Batches: [][]Workload{{w("app", "w")}}},
		{From: "1-29", To: "1-30", Done: 1, Tags: []TagMove{{Tag: "default", From: "1-29", To: "1-30"}},
			Relabel: []Relabel{{Namespace: "direct", From: "1-29", To: "1-30"}},
			Batches: [][]Workload{{w("a", "x"), w("a", "y")}, {w("b", "x")}}, Deferred: []Workload{w("c", "z")}},
		{From: "default", To: "canary", Done: 2, Batches: [][]Workload{{w("a", "x")}, {{Namespace: "b", Kind: "StatefulSet", Name: "s"}}}},
	} {
		b, err := encodeRecord(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"from":"a","to":"b","batches":null,"done":3}`))
	f.Add([]byte(`{"batches":[[],[]],"done":1e3}`))
	const source = "the revision upgrade's progress record istio-system/" + RecordName
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := decodeRecord(source, data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), source+" is not readable") {
				t.Fatalf("error does not name the record: %v", err)
			}
			return
		}
		again, err := encodeRecord(rec)
		if err != nil {
			t.Fatalf("a record read does not encode: %v", err)
		}
		back, err := decodeRecord(source, again)
		if err != nil {
			t.Fatalf("a record read re-encodes to one that does not read: %v\n%s", err, again)
		}
		// Read back, it encodes the same (an empty list and none are one record).
		if twice, err := encodeRecord(back); err != nil || string(twice) != string(again) {
			t.Fatalf("round trip changed the record (%v):\n%s\n%s", err, again, twice)
		}
		// Every recorded workload exists; no revision injects any: what a resume and a
		// rollback make of the record's own numbers.
		live := &Live{Existing: map[Workload]bool{}}
		for _, w := range rec.workloads() {
			live.Existing[w] = true
		}
		p, err := Decide(live, rec, Options{From: rec.From, To: rec.To, BatchSize: 2})
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
		if p.Done < 0 || p.Done > len(p.Batches) {
			t.Fatalf("resumed plan: %d of %d batches done", p.Done, len(p.Batches))
		}
		p.Remaining()
		p.Writes()
		if _, err := Reverse(live, rec, Options{BatchSize: 2}); err != nil {
			t.Fatalf("rollback: %v", err)
		}
	})
}
