package printer

import (
	"bytes"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/event"
)

// The terminal view prints the same lines as the plain one, draws a bar under them while the
// run goes on, and leaves no bar behind.
func TestTerminalEvents(t *testing.T) {
	var tty, plain bytes.Buffer
	events := []event.Event{
		{Type: event.Lock, Status: "waiting", Holder: "istioctl install of a@b, pid 1", Message: "waiting for the cluster lock: istioctl install of a@b, pid 1 holds it"},
		{Type: event.Lock, Status: "acquired", Message: "took the cluster lock after waiting 1s"},
		{Type: event.Plan, Total: 2},
		{Type: event.ComponentStarted, Component: "Pilot", Title: "Istiod", Total: 2},
		{Type: event.Applied, Component: "Pilot", Object: "Deployment/istio-system/istiod", Status: "created"},
		{Type: event.Applied, Component: "Pilot", Object: "Service/istio-system/istiod", Status: "created"},
		{Type: event.Waiting, Component: "Pilot", Object: "Deployment/istio-system/istiod", Message: "0 of 1 replicas ready"},
		{Type: event.ComponentReady, Component: "Pilot", Title: "Istiod", Icon: "🧠"},
		{Type: event.Done, Message: "2 applied, 0 unchanged, 0 pruned"},
	}
	bar, text := NewTerminalEvents(&tty, Text), NewEvents(&plain, Text)
	for _, e := range events {
		bar.Emit(e)
		text.Emit(e)
	}
	out := tty.String()
	if !strings.Contains(out, "Waiting for the cluster lock, held by istioctl install of a@b, pid 1") {
		t.Errorf("no progress line while waiting for the lock:\n%q", out)
	}
	if !strings.Contains(out, "\r") || !strings.Contains(out, "Pilot (waiting on Deployment/istio-system/istiod: 0 of 1 replicas ready)") {
		t.Errorf("no bar drawn with what it waits on:\n%q", out)
	}
	// Each plain line is there, in order, and the bar's last drawing is cleared.
	var lines []string
	for _, chunk := range strings.Split(out, "\n") {
		if i := strings.LastIndex(chunk, "\r"); i >= 0 {
			chunk = chunk[i+1:]
		}
		if strings.TrimSpace(chunk) != "" {
			lines = append(lines, chunk)
		}
	}
	if got, want := strings.Join(lines, "\n"), strings.TrimSpace(plain.String()); got != want {
		t.Errorf("terminal lines:\n%s\nwant the plain lines:\n%s", got, want)
	}
	if strings.Contains(plain.String(), "\r") {
		t.Error("the plain view drew a bar")
	}
}

// JSON is JSON on a terminal too.
func TestTerminalEventsJSON(t *testing.T) {
	var b bytes.Buffer
	NewTerminalEvents(&b, JSON).Emit(event.Event{Type: event.Plan, Total: 3})
	if !strings.HasPrefix(b.String(), `{"time":`) || strings.Contains(b.String(), "\r") {
		t.Errorf("json on a terminal: %q", b.String())
	}
}
