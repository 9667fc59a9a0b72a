package migrate

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/revision"
)

// wl is Deployment ns/name.
func wl(s string) Workload {
	ns, name, _ := strings.Cut(s, "/")
	return Workload{Namespace: ns, Kind: "Deployment", Name: name}
}

func wls(ss ...string) []Workload {
	out := make([]Workload, len(ss))
	for i, s := range ss {
		out[i] = wl(s)
	}
	return out
}

// skips words a plan's skipped entries as "object reason".
func skips(p *Plan) []string {
	var out []string
	for _, s := range p.Skipped {
		out = append(out, s.Object+" "+string(s.Reason))
	}
	return out
}

// without removes w from revision rev's workloads (none of its pods is injected by it).
func without(l *Live, rev string, w Workload) {
	r := find(l.Revisions, rev)
	for i, x := range r.Workloads {
		if x.Namespace == w.Namespace && x.Name == w.Name {
			r.Workloads = append(r.Workloads[:i], r.Workloads[i+1:]...)
			return
		}
	}
}

// A resumed run restarts a recorded workload only if it exists, a pod of it is injected
// by the old or the new revision, and it is within --namespaces; it skips the others with
// why, keeps those that may yet move in the record (deferred), and drops the deleted.
func TestDecideChecksTheRecord(t *testing.T) {
	rec := func() *Record {
		return &Record{From: "a", To: "b", Done: 1,
			Relabel:  []Relabel{{Namespace: "direct", From: "a", To: "b"}, {Namespace: "by-prod", From: "a", To: "b"}},
			Batches:  [][]Workload{wls("by-default/w0"), wls("by-default/w1", "by-prod/w0"), wls("enabled/w0", "enabled/w1")},
			Deferred: wls("direct/w0")}
	}
	for _, tc := range []struct {
		name         string
		namespaces   []string
		change       func(l *Live)
		wantBatches  string
		wantSkipped  []string
		wantDeferred []Workload
	}{
		{name: "a record the cluster bears out is resumed whole; its deferred workload joins",
			wantBatches: "by-default/w0 | by-default/w1 by-prod/w0 | enabled/w0 enabled/w1 | direct/w0 by-prod/w1 direct/w1"},
		{name: "a deleted workload is skipped and dropped, one no longer injected skipped and kept",
			change: func(l *Live) {
				l.Existing[wl("by-prod/w0")] = false
				without(l, "a", wl("enabled/w1"))
			},
			wantBatches:  "by-default/w0 | by-default/w1 | enabled/w0 | direct/w0 by-prod/w1 direct/w1",
			wantSkipped:  []string{"Deployment/by-prod/w0 deleted", "Deployment/enabled/w1 not-injected"},
			wantDeferred: wls("by-prod/w0", "enabled/w1")},
		{name: "a workload half moved (pods on both revisions) is restarted",
			change: func(l *Live) {
				b := find(l.Revisions, "b")
				b.Workloads = append(b.Workloads, revision.Workload{Namespace: "enabled", Kind: "Deployment", Name: "w1"})
				without(l, "a", wl("enabled/w1"))
			},
			wantBatches: "by-default/w0 | by-default/w1 by-prod/w0 | enabled/w0 enabled/w1 | direct/w0 by-prod/w1 direct/w1"},
		{name: "--namespaces applies to the recorded batches and the deferred workloads",
			namespaces:   []string{"enabled"},
			wantBatches:  "by-default/w0 | enabled/w0 enabled/w1",
			wantSkipped:  []string{"Deployment/by-default/w1 outside-namespaces", "Deployment/by-prod/w0 outside-namespaces", "Deployment/direct/w0 outside-namespaces"},
			wantDeferred: wls("by-default/w1", "by-prod/w0", "direct/w0")},
		{name: "a deleted workload is reported as deleted, within --namespaces or not",
			namespaces:   []string{"enabled"},
			change:       func(l *Live) { l.Existing[wl("by-prod/w0")] = false },
			wantBatches:  "by-default/w0 | enabled/w0 enabled/w1",
			wantSkipped:  []string{"Deployment/by-default/w1 outside-namespaces", "Deployment/by-prod/w0 deleted", "Deployment/direct/w0 outside-namespaces"},
			wantDeferred: wls("by-default/w1", "by-prod/w0", "direct/w0")},
		{name: "a namespace the run relabelled, deleted or relabelled since, is reported",
			change: func(l *Live) {
				delete(l.Labels, "direct")
				l.Labels["by-prod"] = map[string]string{"istio.io/rev": "a"}
			},
			wantBatches: "by-default/w0 | by-default/w1 by-prod/w0 | enabled/w0 enabled/w1 | direct/w0 by-prod/w1 direct/w1",
			wantSkipped: []string{"Namespace/direct deleted", "Namespace/by-prod label-changed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rec()
			l := liveOf(revs(), r)
			if tc.change != nil {
				tc.change(l)
			}
			p, err := Decide(l, r, Options{From: "a", To: "b", BatchSize: 3, Relabel: true, Namespaces: tc.namespaces})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(p.Batches); got != tc.wantBatches {
				t.Errorf("batches:\n got %s\nwant %s", got, tc.wantBatches)
			}
			if got := skips(p); !reflect.DeepEqual(got, tc.wantSkipped) {
				t.Errorf("skipped %v, want %v", got, tc.wantSkipped)
			}
			if !reflect.DeepEqual(p.Deferred, tc.wantDeferred) {
				t.Errorf("deferred %v, want %v", p.Deferred, tc.wantDeferred)
			}
			if p.Done != 1 {
				t.Errorf("done %d, want the record's 1", p.Done)
			}
			// A skipped workload is in no batch the run restarts.
			for _, b := range p.Batches[p.Done:] {
				for _, w := range b {
					if slices.ContainsFunc(p.Skipped, func(s Skip) bool { return s.Object == w.String() }) {
						t.Errorf("the plan restarts %s, which it skipped", w)
					}
				}
			}
			// The record the run writes keeps the deferred workloads and drops the deleted.
			saved := recordOf(p, r)
			if !reflect.DeepEqual(saved.Deferred, tc.wantDeferred) {
				t.Errorf("the record written keeps %v deferred, want %v", saved.Deferred, tc.wantDeferred)
			}
			// Each skip becomes a skipped event naming the object and why.
			for i, e := range p.SkipEvents() {
				if e.Type != event.Skipped || e.Object != p.Skipped[i].Object || e.SkipReason != p.Skipped[i].Reason {
					t.Errorf("skip event %d: %+v", i, e)
				}
			}
		})
	}
}

// A rollback undoes a relabel only where the namespace exists and still carries the label
// the run set, returns the recorded workloads that exist and are injected by either
// revision, and the deferred ones that moved; --namespaces is refused.
func TestReverseChecksTheRecord(t *testing.T) {
	rec := &Record{From: "a", To: "b", Done: 0,
		Relabel: []Relabel{{Namespace: "direct", From: "a", To: "b"}, {Namespace: "gone", From: "a", To: "b"},
			{Namespace: "changed", From: "a", To: "b"}, {Namespace: "unlabelled", From: "a", To: "b"}},
		Batches:  [][]Workload{wls("by-default/w0", "by-prod/w0", "enabled/w0"), wls("enabled/w1")},
		Deferred: wls("direct/w1", "by-prod/w1", "enabled/w9")}
	l := liveOf(revs(), rec)
	l.Existing[wl("by-prod/w0")] = false
	l.Existing[wl("enabled/w9")] = false
	without(l, "a", wl("enabled/w0"))
	without(l, "a", wl("direct/w1"))
	b := find(l.Revisions, "b")
	b.Workloads = append(b.Workloads, revision.Workload{Namespace: "direct", Kind: "Deployment", Name: "w1"})
	delete(l.Labels, "gone")
	l.Labels["changed"] = map[string]string{"istio.io/rev": "canary"}
	l.Labels["unlabelled"] = map[string]string{"other": "x"}

	p, err := Reverse(l, rec, Options{BatchSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	if want := []Relabel{{Namespace: "direct", From: "b", To: "a"}}; !reflect.DeepEqual(p.Relabel, want) {
		t.Errorf("relabels %v, want %v", p.Relabel, want)
	}
	wantSkipped := []string{"Namespace/gone deleted", "Namespace/changed label-changed", "Namespace/unlabelled label-changed",
		"Deployment/by-prod/w0 deleted", "Deployment/enabled/w0 not-injected", "Deployment/enabled/w9 deleted"}
	if got := skips(p); !reflect.DeepEqual(got, wantSkipped) {
		t.Errorf("skipped %v, want %v", got, wantSkipped)
	}
	if got, want := p.Skipped[1].Now, "istio.io/rev=canary now, b recorded"; got != want {
		t.Errorf("the changed label's skip says %q, want %q", got, want)
	}
	// The batch begun (the first) goes back, the one never begun is not touched; of the
	// deferred, the one that moved goes back, the deleted one is reported.
	if got, want := names(p.Batches), "by-default/w0 | direct/w1"; got != want {
		t.Errorf("batches %s, want %s", got, want)
	}
	if p.Deferred != nil {
		t.Errorf("a rollback keeps nothing deferred: %v", p.Deferred)
	}

	if _, err := Reverse(l, rec, Options{Namespaces: []string{"direct"}}); err == nil || !strings.Contains(err.Error(), "--namespaces") {
		t.Errorf("a rollback with --namespaces: %v", err)
	}
}

func TestRelabelSkip(t *testing.T) {
	r := Relabel{Namespace: "n", From: "b", To: "a"}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		exists bool
		want   event.SkipReason
		now    string
	}{
		{"carries the recorded value", map[string]string{"istio.io/rev": "b"}, true, "", ""},
		{"deleted", nil, false, event.SkipDeleted, ""},
		{"relabelled by someone else", map[string]string{"istio.io/rev": "c"}, true, event.SkipLabelChanged, "istio.io/rev=c now, b recorded"},
		{"label removed", map[string]string{}, true, event.SkipLabelChanged, "no istio.io/rev label now, b recorded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why, now := relabelSkip(tc.labels, tc.exists, r)
			if why != tc.want || now != tc.now {
				t.Errorf("relabelSkip: %q %q, want %q %q", why, now, tc.want, tc.now)
			}
		})
	}
	// "default" is the default revision's name whichever way the label spells it.
	if why, _ := relabelSkip(map[string]string{"istio.io/rev": "default"}, true, Relabel{From: "default"}); why != "" {
		t.Errorf("istio.io/rev=default for revision default: %s", why)
	}
}

// observe finds which recorded workloads and relabelled namespaces exist, with the
// namespaces' labels.
func TestObserve(t *testing.T) {
	f := newFakeCluster(t, deployment("app", "w0"), namespace("direct", map[string]string{"istio.io/rev": "b"}), namespace("other", nil))
	rec := &Record{From: "a", To: "b", Batches: [][]Workload{wls("app/w0", "app/w1")}, Deferred: wls("else/w2"),
		Relabel: []Relabel{{Namespace: "direct", From: "a", To: "b"}, {Namespace: "gone", From: "a", To: "b"}}}
	existing, labels, err := observe(context.Background(), f.client, rec)
	if err != nil {
		t.Fatal(err)
	}
	want := map[Workload]bool{wl("app/w0"): true, wl("app/w1"): false, wl("else/w2"): false}
	if !reflect.DeepEqual(existing, want) {
		t.Errorf("existing %v, want %v", existing, want)
	}
	if want := map[string]map[string]string{"direct": {"istio.io/rev": "b"}}; !reflect.DeepEqual(labels, want) {
		t.Errorf("labels %v, want %v", labels, want)
	}
}
