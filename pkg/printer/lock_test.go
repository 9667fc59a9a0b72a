package printer

import (
	"bytes"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/event"
)

// The cluster lock's events, one line each in the text output.
func TestLockLines(t *testing.T) {
	for _, tc := range []struct {
		e    event.Event
		want string
	}{
		{event.Event{Type: event.Lock, Message: "waiting for the cluster lock: x has held it for 3s; waiting up to 10m0s (--lock-timeout)", LockChange: event.LockChange{Lock: event.LockWaiting}},
			"- Waiting for the cluster lock: x has held it for 3s; waiting up to 10m0s (--lock-timeout)\n"},
		{event.Event{Type: event.Lock, Message: "took the cluster lock after waiting 2.1s", LockChange: event.LockChange{Lock: event.LockAcquired}}, "- Took the cluster lock after waiting 2.1s\n"},
		{event.Event{Type: event.Lock, Message: "took over the expired cluster lock of x", LockChange: event.LockChange{Lock: event.LockTakenOver}}, "! Took over the expired cluster lock of x\n"},
		{event.Event{Type: event.Lock, Error: "lost the cluster lock: y\nmore", LockChange: event.LockChange{Lock: event.LockLost}}, "✘ Lost the cluster lock: y\n"},
	} {
		var b bytes.Buffer
		NewEvents(&b, Text).Emit(tc.e)
		if b.String() != tc.want {
			t.Errorf("%s: %q, want %q", tc.e.Status, b.String(), tc.want)
		}
	}
}
