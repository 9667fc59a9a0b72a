package skew

import (
	"strings"
	"testing"
)

func TestRules(t *testing.T) {
	for _, tc := range []struct {
		name   string
		got    Verdict
		ok     bool
		rule   Rule
		substr string
	}{
		{"in place one minor", Hop("1.30.2", "1.31.0", true), true, InPlace, "crosses 1 minor"},
		{"in place patch", Hop("1.31.0", "1.31.1", true), true, InPlace, "crosses 0 minor"},
		{"in place two minors", Hop("1.29.4", "1.31.0", true), false, InPlace, "go through 1.30 first"},
		{"in place three minors", Hop("1.28.0", "1.31.0", true), false, InPlace, "go through 1.29, then 1.30 first"},
		{"by revision two minors", Hop("1.29.4", "1.31.0", false), true, ByRevision, "crosses 2 minor"},
		{"by revision three minors", Hop("1.28.1", "1.31.0", false), false, ByRevision, "go through 1.30 first"},
		{"downgrade one minor", Hop("1.31.0", "1.30.1", true), true, InPlace, "goes back 1 minor"},
		{"downgrade two minors", Hop("1.31.0", "1.29.1", true), false, InPlace, "goes back 2 minor"},
		{"dev build", Hop("master", "1.31.0", true), true, InPlace, "cannot compare"},
		{"proxy same", Proxy("1.31.0", "1.31.0"), true, ProxySkew, "serves proxies"},
		{"proxy one behind", Proxy("1.31.0", "1.30.3"), true, ProxySkew, "serves proxies"},
		{"proxy two behind", Proxy("1.31.0", "1.29.0"), false, ProxySkew, "2 minor versions behind"},
		{"proxy three behind", Proxy("1.31.0", "1.28.0"), false, ProxySkew, "3 minor versions behind"},
		{"proxy ahead", Proxy("1.30.0", "1.31.0"), false, ProxySkew, "would be newer than istiod"},
		{"proxy other major", Proxy("1.31.0", "2.0.0"), false, ProxySkew, "differ in major"},
		{"istiod other major", Proxy("2.0.0", "1.30.0"), false, ProxySkew, "differ in major"},
		{"image tag with a variant", Proxy("1.30.0-distroless", "1.30.0"), true, ProxySkew, "serves proxies"},
		{"istiod by digest", Proxy("latest", "1.30.0"), true, ProxySkew, "cannot compare"},
		{"cni ahead", NodeAgent("CNI", "1.30.0", "1.31.0"), false, Order, "ahead of the control plane"},
		{"cni one behind", NodeAgent("CNI", "1.31.0", "1.30.0"), true, NodeAgentSkew, "works with"},
		{"ztunnel two behind", NodeAgent("ztunnel", "1.31.0", "1.29.0"), false, NodeAgentSkew, "2 minor versions behind"},
		{"kubernetes in window", Kubernetes("1.31.0", "v1.34.2"), true, KubernetesWindow, "1.32 to 1.36"},
		{"kubernetes too old", Kubernetes("1.31.0", "v1.31.0"), false, KubernetesWindow, "runs 1.31"},
		{"kubernetes too new", Kubernetes("1.29.0", "v1.36.0"), false, KubernetesWindow, "runs 1.36"},
		{"kubernetes unknown release", Kubernetes("1.20.0", "v1.36.0"), true, KubernetesWindow, "no Kubernetes window"},
		{"gateway api old", GatewayAPI("1.31.0", "v1.4.1"), false, GatewayAPIMinimum, "older than v1.5.0"},
		{"gateway api recent", GatewayAPI("1.30.0", "v1.5.1"), true, GatewayAPIMinimum, "needs v1.5.0 or later"},
		{"gateway api before 1.30", GatewayAPI("1.29.0", "v1.2.0"), true, GatewayAPIMinimum, "states no minimum"},
		{"gateway api no bundle-version", GatewayAPI("1.31.0", ""), false, GatewayAPIMinimum, "does not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got.OK != tc.ok || tc.got.Rule.ID != tc.rule.ID || !strings.Contains(tc.got.Message, tc.substr) {
				t.Errorf("got %+v; want ok=%v, rule %s, message with %q", tc.got, tc.ok, tc.rule.ID, tc.substr)
			}
			if !tc.got.OK && !strings.Contains(tc.got.String(), tc.rule.Source) {
				t.Errorf("a broken rule's text does not name its source: %s", tc.got)
			}
		})
	}
}

func TestRulesNameSources(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules {
		if r.ID == "" || r.Says == "" || r.Source == "" || seen[r.ID] {
			t.Errorf("rule %+v: every rule has a unique id, a statement and a source", r)
		}
		seen[r.ID] = true
	}
}

func TestCrossed(t *testing.T) {
	got, err := Crossed("1.29.4", "1.31.0")
	if err != nil || strings.Join(got, ",") != "1.30,1.31" {
		t.Errorf("Crossed(1.29.4, 1.31.0) = %v, %v", got, err)
	}
	if got, _ := Crossed("1.31.0", "1.31.2"); len(got) != 0 {
		t.Errorf("a patch crosses no minor: %v", got)
	}
	if _, err := Crossed("dev", "1.31.0"); err == nil {
		t.Error("Crossed(dev, 1.31.0): want an error")
	}
}
