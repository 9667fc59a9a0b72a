package mirror

import (
	"context"
	"strings"
	"testing"
)

func TestTarget(t *testing.T) {
	for src, want := range map[string]string{
		"docker.io/istio/pilot:1.31.0":                                          "reg.local:5000/mesh/pilot:1.31.0",
		"istio/proxyv2:1.31.0-distroless":                                       "reg.local:5000/mesh/proxyv2:1.31.0-distroless",
		"gcr.io/istio-release/ztunnel:1.31.0@sha256:" + strings.Repeat("a", 64): "reg.local:5000/mesh/ztunnel:1.31.0@sha256:" + strings.Repeat("a", 64),
		"localhost:5000/a/b/install-cni":                                        "reg.local:5000/mesh/install-cni",
	} {
		got, err := Target(src, "reg.local:5000/mesh/")
		if err != nil || got != want {
			t.Errorf("Target(%s) = %q, %v; want %q", src, got, err, want)
		}
	}
}

func TestRunRefusesBeforeCopying(t *testing.T) {
	for _, tc := range []struct {
		name   string
		o      Options
		errHas string
	}{
		{"no target", Options{Images: []string{"istio/pilot:1"}}, "--to"},
		{"bad target", Options{To: "UPPER:case:x", Images: []string{"istio/pilot:1"}}, "not a registry"},
		{"two sources, one target", Options{To: "reg.local/m", Images: []string{"docker.io/istio/pilot:1", "quay.io/other/pilot:1"}}, "would both be copied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var events []Event
			tc.o.Event = func(e Event) { events = append(events, e) }
			_, err := Run(context.Background(), tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("error %v, want one saying %q", err, tc.errHas)
			}
			if len(events) > 0 {
				t.Errorf("events before the refusal: %v", events)
			}
		})
	}
}
