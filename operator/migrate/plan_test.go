package migrate

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/revision"
)

// revs: a with tags default and prod, namespaces following each way, two workloads in
// each; b already installed with one namespace of its own.
func revs() []*revision.Revision {
	a := &revision.Revision{Name: "a", Namespace: "istio-system", Tags: []string{"default", "prod"}, Namespaces: []revision.Selection{
		{Namespace: "by-default", Label: "istio.io/rev=default", Tag: "default"},
		{Namespace: "by-prod", Label: "istio.io/rev=prod", Tag: "prod"},
		{Namespace: "direct", Label: "istio.io/rev=a"},
		{Namespace: "enabled", Label: "istio-injection=enabled", Tag: "default"},
	}}
	for _, ns := range []string{"by-default", "by-prod", "direct", "enabled"} {
		for i := range 2 {
			a.Workloads = append(a.Workloads, revision.Workload{Namespace: ns, Kind: "Deployment", Name: fmt.Sprintf("w%d", i)})
		}
	}
	a.Workloads = append(a.Workloads, revision.Workload{Namespace: "enabled", Kind: "Pod", Name: "bare", Pods: []revision.Proxy{{Pod: "bare"}}})
	b := &revision.Revision{Name: "b", Namespace: "istio-system"}
	return []*revision.Revision{a, b}
}

func names(bs [][]Workload) string {
	var out []string
	for _, b := range bs {
		var ns []string
		for _, w := range b {
			ns = append(ns, w.Namespace+"/"+w.Name)
		}
		out = append(out, strings.Join(ns, " "))
	}
	return strings.Join(out, " | ")
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name        string
		opts        Options
		rec         *Record
		wantBatches string
		wantDone    int
		wantRelabel int
		wantLeft    []string
	}{
		{name: "without relabel the direct namespace stays", opts: Options{BatchSize: 4},
			wantBatches: "by-default/w0 by-default/w1 by-prod/w0 by-prod/w1 | enabled/w0 enabled/w1", wantLeft: []string{"direct"}},
		{name: "relabel moves it", opts: Options{BatchSize: 3, Relabel: true}, wantRelabel: 1,
			wantBatches: "by-default/w0 by-default/w1 by-prod/w0 | by-prod/w1 direct/w0 direct/w1 | enabled/w0 enabled/w1"},
		{name: "a first subset", opts: Options{BatchSize: 5, Relabel: true, Namespaces: []string{"enabled"}}, wantRelabel: 1,
			wantBatches: "enabled/w0 enabled/w1"},
		{name: "a record's batches come first, finished ones stay done", opts: Options{BatchSize: 5},
			rec:      &Record{From: "a", To: "b", Done: 1, Batches: [][]Workload{{{Namespace: "enabled", Kind: "Deployment", Name: "w0"}}}},
			wantDone: 1, wantLeft: []string{"direct"},
			wantBatches: "enabled/w0 | by-default/w0 by-default/w1 by-prod/w0 by-prod/w1 enabled/w1"},
		{name: "another run's record is not resumed", opts: Options{BatchSize: 8},
			rec:         &Record{From: "a", To: "c", Done: 1, Batches: [][]Workload{{{Namespace: "enabled", Kind: "Deployment", Name: "w0"}}}},
			wantLeft:    []string{"direct"},
			wantBatches: "by-default/w0 by-default/w1 by-prod/w0 by-prod/w1 enabled/w0 enabled/w1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.From, o.To = "a", "b"
			p, err := Decide(liveOf(revs(), tc.rec), tc.rec, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(p.Batches); got != tc.wantBatches {
				t.Errorf("batches:\n got %s\nwant %s", got, tc.wantBatches)
			}
			if p.Done != tc.wantDone || len(p.Relabel) != tc.wantRelabel || !reflect.DeepEqual(p.Left, tc.wantLeft) {
				t.Errorf("done %d relabel %v left %v; want %d, %d, %v", p.Done, p.Relabel, p.Left, tc.wantDone, tc.wantRelabel, tc.wantLeft)
			}
			if !reflect.DeepEqual(p.Unrestartable, []ref.Ref{ref.New("Pod", "enabled", "bare")}) && tc.opts.Namespaces == nil {
				t.Errorf("unrestartable %v, want the bare pod", p.Unrestartable)
			}
			if tc.rec == nil && len(p.Tags) != 2 {
				t.Errorf("tags %v, want default and prod moved", p.Tags)
			}
			// Every write into the user's objects is in the plan.
			writes := strings.Join(p.Writes(), "\n")
			for _, b := range p.Batches[p.Done:] {
				for _, w := range b {
					if !strings.Contains(writes, w.String()) {
						t.Errorf("the plan's writes do not name %s:\n%s", w, writes)
					}
				}
			}
		})
	}
}

func TestDecideRefuses(t *testing.T) {
	if _, err := Decide(&Live{Revisions: revs()}, nil, Options{From: "a", To: "b"}); err == nil || !strings.Contains(err.Error(), "--batch-size") {
		t.Errorf("batch size 0: %v", err)
	}
}

// liveOf is a cluster holding revs and, of rec, every workload (injected by a) and every
// relabelled namespace, labelled with the revision the record moved it to.
func liveOf(revs []*revision.Revision, rec *Record) *Live {
	l := &Live{Revisions: revs, Existing: map[Workload]bool{}, Labels: map[string]map[string]string{}}
	if rec == nil {
		return l
	}
	a := find(revs, "a")
	for _, w := range rec.workloads() {
		l.Existing[w] = true
		if !l.injectedBy(w, "a") && !l.injectedBy(w, "b") {
			a.Workloads = append(a.Workloads, revision.Workload{Namespace: w.Namespace, Kind: w.Kind, Name: w.Name})
		}
	}
	for _, r := range rec.Relabel {
		l.Labels[r.Namespace] = map[string]string{"istio.io/rev": r.To}
	}
	return l
}

func TestReverse(t *testing.T) {
	if _, err := Reverse(&Live{}, nil, Options{}); err == nil {
		t.Fatal("a rollback without a record went ahead")
	}
	rec := &Record{From: "a", To: "b", Done: 1, Tags: []TagMove{{Tag: "default", From: "a", To: "b"}},
		Relabel: []Relabel{{Namespace: "direct", From: "a", To: "b"}},
		Batches: [][]Workload{{{Name: "x"}}, {{Name: "y"}}, {{Name: "z"}}}}
	p, err := Reverse(liveOf(revs(), rec), rec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The batch in progress is returned too; the one never begun is not touched.
	if p.From != "b" || p.To != "a" || len(p.Batches) != 2 || p.Tags[0].To != "a" || p.Relabel[0].To != "a" || !p.Rollback {
		t.Errorf("reverse: %+v", p)
	}
}
