package main

import (
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/fingerprint"
)

// Upstream's log lines on standard output (with their continuation lines) are not part of
// the manifest.
func TestWithoutLogs(t *testing.T) {
	in := "2026-12-02T00:11:54.005629Z\twarn\twarnings occurred during mesh validation: 1 error occurred:\n" +
		"\t* 'ISTIO_META_DNS_AUTO_ALLOCATE' is deprecated\n\n\napiVersion: v1\nkind: ConfigMap\n"
	if got, want := string(withoutLogs([]byte(in))), "apiVersion: v1\nkind: ConfigMap\n"; got != want {
		t.Errorf("withoutLogs = %q, want %q", got, want)
	}
}

// A case conforms with no difference, or with exactly its listed one: a verdict difference
// the way it is listed, a render difference only in the objects its patterns name.
func TestJudge(t *testing.T) {
	corpus := &Corpus{Differences: map[string]Difference{
		"strict": {ID: "strict", Kind: "verdict", Ours: "rejected"},
		"ns":     {ID: "ns", Kind: "render", Objects: []string{"*/mesh/*"}},
	}}
	objs := func(kv ...string) Result {
		r := Result{Accepted: true, Objects: map[string]fingerprint.Object{}}
		for i := 0; i < len(kv); i += 2 {
			r.Objects[kv[i]] = fingerprint.Object{Digest: kv[i+1]}
		}
		return r
	}
	rejected := Result{Error: "spec.yaml:4: spec.profile: no"}
	for _, tc := range []struct {
		name, diff string
		up, ours   Result
		problem    string // "" conforms
	}{
		{"the same objects", "", objs("A/x/a", "1"), objs("A/x/a", "1"), ""},
		{"a digest differs", "", objs("A/x/a", "1"), objs("A/x/a", "2"), "1 differences"},
		{"both reject", "", rejected, rejected, ""},
		{"ours rejects, listed", "strict", objs(), rejected, ""},
		{"ours rejects, not listed", "", objs(), rejected, "1 differences"},
		{"ours rejects, listed, naming no file and line", "strict", objs(), Result{Error: "rendering Pilot: no"}, "names no file:line"},
		{"ours rejects, listed, naming the --set flag", "strict", objs(), Result{Error: "--set values.global.hub=: spec.values.global.hub: is empty"}, ""},
		{"listed but the same", "strict", rejected, rejected, "listed as strict"},
		{"a render difference in the listed objects", "ns", objs("A/x/a", "1", "B/mesh/b", "1"), objs("A/x/a", "1", "B/mesh/b", "2"), ""},
		{"a render difference beyond them", "ns", objs("A/x/a", "1"), objs("A/x/a", "2"), "A/x/a differs too"},
		{"a render difference that is gone", "ns", objs("A/x/a", "1"), objs("A/x/a", "1"), "drop the listing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Judge(corpus, Case{ID: "c", Difference: tc.diff}, tc.up, tc.ours)
			switch {
			case tc.problem == "" && o.Problem != "":
				t.Errorf("problem %q, want none (diffs %v)", o.Problem, o.Diffs)
			case tc.problem != "" && !strings.Contains(o.Problem, tc.problem):
				t.Errorf("problem %q, want %q", o.Problem, tc.problem)
			}
		})
	}
}

// TestJudgeDeprecations: the deprecation warnings upstream's manifest generate prints are
// compared; the chart's (install only) are not; a deprecation warning of ours no row of the
// table lists fails the case.
func TestJudgeDeprecations(t *testing.T) {
	dns := "meshConfig.defaultConfig.proxyMetadata.ISTIO_META_DNS_AUTO_ALLOCATE"
	chart := "values.global.mtls.auto"
	for _, tc := range []struct {
		name      string
		up, ours  Result
		wantFails bool
	}{
		{"both warn", Result{Deprecations: []string{dns}}, Result{Deprecations: []string{dns}}, false},
		{"ours is silent", Result{Deprecations: []string{dns}}, Result{}, true},
		{"ours alone warns of a compared row", Result{}, Result{Deprecations: []string{dns}}, true},
		{"a chart row upstream prints at install only", Result{}, Result{Deprecations: []string{chart}}, false},
		{"an unlisted warning", Result{}, Result{Unlisted: []string{"! warning: x is deprecated"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := judgeDeprecations(tc.up, tc.ours); (got != "") != tc.wantFails {
				t.Errorf("judgeDeprecations = %q, want a problem: %v", got, tc.wantFails)
			}
		})
	}
	r := withDeprecations(Result{}, "2026-12-04T17:16:23Z\twarn\twarnings occurred during mesh validation: 1 error occurred:\n\t* 'ISTIO_META_DNS_AUTO_ALLOCATE' is deprecated; review ...\n")
	if len(r.Deprecations) != 1 || r.Deprecations[0] != dns {
		t.Errorf("upstream's log line read as %v", r.Deprecations)
	}
}
