package main

import (
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	for _, tc := range []struct{ comment, want string }{
		{"The hosts. Could be a DNS\nname.\n\nMore.", "The hosts."},
		{"Label assigned to the port.\n+kubebuilder:validation:MaxLength=256", "Label assigned to the port."},
		{"Settings of the pool", ""},
		{"Values are as follows:\n\n- `exact` for a match\n\n- `regex` for the rest.", "Values are as follows: - `exact` for a match - `regex` for the rest."},
		{"Originating locality, e.g. us-west.", "Originating locality, e.g."},
		{"Old field.\n$hide_from_docs", ""},
		{"$hide_from_docs\nDeprecated.", ""},
		{"Ends with etc.", "Ends with etc."},
	} {
		c := parseComment(tc.comment)
		if got := describe(c.prose, nil); got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.comment, got, tc.want)
		}
	}
}

func TestParseCommentJoinsQuotedMarkers(t *testing.T) {
	c := parseComment(" Doc.\n +cue-gen:A:printerColumn:name=X,description=\"one\n two\"\n +cue-gen:A:scope:Namespaced\n")
	want := []string{`+cue-gen:A:printerColumn:name=X,description="one two"`, "+cue-gen:A:scope:Namespaced"}
	if strings.Join(c.markers, "|") != strings.Join(want, "|") {
		t.Errorf("markers %q, want %q", c.markers, want)
	}
}

func TestKeyValues(t *testing.T) {
	kv := keyValues(`categories=istio-io,networking-istio-io,shortNames=vs,description="a, b"`)
	if strings.Join(kv["categories"], ",") != "istio-io,networking-istio-io" || strings.Join(kv["shortNames"], ",") != "vs" || kv["description"][0] != `"a, b"` {
		t.Errorf("keyValues = %q", kv)
	}
}
