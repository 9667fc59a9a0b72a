package printer

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/mirror"
)

func TestMirrorEvents(t *testing.T) {
	events := []mirror.Event{
		mirror.Started{Total: 3},
		mirror.Copied{Source: "a/pilot:1", Target: "r/pilot:1", Digest: "sha256:0123456789abcdef0123", Platforms: 2},
		mirror.Skipped{Source: "a/proxyv2:1", Target: "r/proxyv2:1", Digest: "sha256:ffff"},
		mirror.Failed{Source: "a/ztunnel:1", Target: "r/ztunnel:1", Err: errors.New("registry r: down")},
	}
	for _, tc := range []struct {
		f    Format
		tty  bool
		want []string
	}{
		{Text, false, []string{"copied   a/pilot:1 -> r/pilot:1 (sha256:0123456789ab, 2 platforms)", "present  r/proxyv2:1 (sha256:ffff)", "FAILED   a/ztunnel:1 -> r/ztunnel:1"}},
		{JSON, true, []string{`{"event":"started","total":3}`, `"event":"copied"`, `"platforms":2`, `{"event":"failed","source":"a/ztunnel:1","target":"r/ztunnel:1","error":"registry r: down"}`}},
		{Text, true, []string{"FAILED   a/ztunnel:1 -> r/ztunnel:1", "mirroring"}},
	} {
		var b bytes.Buffer
		p := NewMirrorEvents(&b, tc.f, tc.tty)
		for _, e := range events {
			p.Event(e)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s tty=%v: %q missing from\n%s", tc.f, tc.tty, w, b.String())
			}
		}
		if tc.tty && tc.f == Text && strings.Contains(b.String(), "copied ") {
			t.Errorf("the terminal view printed a line per copied image:\n%s", b.String())
		}
	}
}
