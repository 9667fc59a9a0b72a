package printer

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/istioctl-installer/istioctl/operator/event"
)

// screen is a terminal for the tests, as much of one as the live view uses: text (wrapping
// at the width), newline, carriage return, cursor up (CSI n A), erase to the end of the
// screen (CSI J); colours are ignored. Like tmux it keeps logical lines, so a resize reflows
// them: a line wider than the new width takes several rows.
type screen struct {
	width int
	lines [][]rune
	// the cursor: a logical line and the offset in it.
	line, off int
}

func newScreen(width int) *screen { return &screen{width: width, lines: [][]rune{nil}} }

func (s *screen) rows(l []rune) int { return max(1, (len(l)+s.width-1)/s.width) }

func (s *screen) Write(p []byte) (int, error) {
	str := string(p)
	for i := 0; i < len(str); {
		switch c := str[i]; {
		case c == '\n':
			s.line, s.off = s.line+1, 0
			if s.line == len(s.lines) {
				s.lines = append(s.lines, nil)
			}
			i++
		case c == '\r':
			s.off -= s.off % s.width
			if s.off > 0 && s.off == len(s.lines[s.line]) && s.off%s.width == 0 {
				// At a wrap point the cursor is still on the row before.
				s.off -= s.width
			}
			i++
		case c == 0x1b:
			j := escapeEnd(str, i)
			seq := str[i:j]
			switch {
			case strings.HasSuffix(seq, "A"):
				n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(seq, "\x1b["), "A"))
				s.up(n)
			case seq == "\x1b[J":
				s.lines[s.line] = s.lines[s.line][:min(s.off, len(s.lines[s.line]))]
				s.lines = s.lines[:s.line+1]
			}
			i = j
		default:
			r, size := utf8.DecodeRuneInString(str[i:])
			l := s.lines[s.line]
			for len(l) < s.off {
				l = append(l, ' ')
			}
			if s.off < len(l) {
				l[s.off] = r
			} else {
				l = append(l, r)
			}
			s.lines[s.line], s.off = l, s.off+1
			i += size
		}
	}
	return len(p), nil
}

// up moves the cursor n rows up, to the same column.
func (s *screen) up(n int) {
	col, row := s.off%s.width, s.off/s.width
	for ; n > 0; n-- {
		if row > 0 {
			row--
			continue
		}
		if s.line == 0 {
			break
		}
		s.line--
		row = s.rows(s.lines[s.line]) - 1
	}
	s.off = row*s.width + col
}

// text is the screen's logical lines, trailing blank ones left out (capture-pane -J).
func (s *screen) text() []string {
	var out []string
	for _, l := range s.lines {
		out = append(out, strings.TrimRight(string(l), " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

func demoRun() []event.Event {
	changes := &event.Changes{Counts: event.Counts{Create: 9, Unchanged: 2, Prune: 1}, Components: []event.ComponentChanges{
		{Component: "Base", Title: "Istio core", Counts: event.Counts{Unchanged: 2}},
		{Component: "Pilot", Title: "Istiod", Counts: event.Counts{Create: 3}},
		{Component: "IngressGateways/istio-ingressgateway", Title: "Ingress gateways", Counts: event.Counts{Create: 3}},
		{Component: "EgressGateways/istio-egressgateway", Title: "Egress gateways", Counts: event.Counts{Create: 3}},
		{Component: "Cni", Title: "CNI", Counts: event.Counts{Prune: 1}},
	}}
	evs := []event.Event{{Type: event.Plan, Total: 11, PlanDetail: event.PlanDetail{Changes: changes}}}
	comp := func(key, title, icon string, objs ...string) []event.Event {
		out := []event.Event{{Type: event.ComponentStarted, Component: key, Title: title, Icon: icon, Total: len(objs)}}
		for _, o := range objs {
			out = append(out, event.Event{Type: event.Applied, Component: key, Title: title, Object: o, ObjectChange: event.ObjectChange{Status: "created", Action: event.ActionCreated}})
		}
		out = append(out,
			event.Event{Type: event.Waiting, Component: key, Title: title, Object: objs[0], Message: "0 of 1 replicas ready, and this reason is long enough to be wider than an eighty-column terminal"},
			event.Event{Type: event.Ready, Component: key, Title: title, Object: objs[0]},
			event.Event{Type: event.ComponentReady, Component: key, Title: title, Icon: icon})
		return out
	}
	evs = append(evs, comp("Base", "Istio core", "⛵️", "CustomResourceDefinition/a.istio.io", "ServiceAccount/istio-system/istio-reader")...)
	evs = append(evs, comp("Pilot", "Istiod", "🧠", "Deployment/istio-system/istiod", "Service/istio-system/istiod", "ConfigMap/istio-system/istio")...)
	// The gateways run at once: their events interleave.
	in := comp("IngressGateways/istio-ingressgateway", "Ingress gateways", "🛬", "Deployment/istio-system/istio-ingressgateway", "Service/istio-system/istio-ingressgateway", "ServiceAccount/istio-system/istio-ingressgateway-service-account")
	eg := comp("EgressGateways/istio-egressgateway", "Egress gateways", "🛫", "Deployment/istio-system/istio-egressgateway", "Service/istio-system/istio-egressgateway", "ServiceAccount/istio-system/istio-egressgateway-service-account")
	for i := range in {
		evs = append(evs, in[i], eg[i])
	}
	return append(evs,
		event.Event{Type: event.Pruned, Component: "Cni", Object: "DaemonSet/kube-system/istio-cni-node", ObjectChange: event.ObjectChange{Action: event.ActionPruned}},
		event.Event{Type: event.Applied, Object: "MutatingWebhookConfiguration/istio-revision-tag-default", ObjectChange: event.ObjectChange{Status: "created", Action: event.ActionCreated}},
		event.Event{Type: event.RevisionTag, Object: "MutatingWebhookConfiguration/istio-revision-tag-default", Message: `Default revision tag points at revision "default"`, TagChange: event.TagChange{TagOutcome: event.TagCreated}},
		event.Event{Type: event.Done, Message: "9 applied, 2 unchanged, 1 pruned", RunEnd: event.RunEnd{Operation: "install"}},
	)
}

// The terminal view ends with the plan's counts, one line per component and the results:
// no object line, no live line, no bar, nothing wider than the terminal; with -v it holds
// every plain line.
func TestTerminalEvents(t *testing.T) {
	for _, width := range []int{80, 200, 40} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			scr := newScreen(width)
			sink := NewTerminalEvents(scr, Text, TerminalOptions{Size: func() (int, int) { return scr.width, 24 }})
			var plain bytes.Buffer
			text := NewEvents(&plain, Text, EventOptions{Objects: true})
			for _, e := range demoRun() {
				sink.Emit(e)
				text.Emit(e)
			}
			var want []string
			for _, l := range strings.Split(strings.TrimSpace(plain.String()), "\n") {
				if !strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "- Applying") || strings.HasPrefix(l, "  Istio") || strings.HasPrefix(l, "  Ingress") || strings.HasPrefix(l, "  Egress") || strings.HasPrefix(l, "  CNI") {
					want = append(want, cut(l, width-1))
				}
			}
			got := scr.text()
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("at %d columns the screen holds:\n%s\nwant:\n%s", width, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for _, l := range got {
				if displayWidth(l) > width {
					t.Errorf("wider than %d columns: %q", width, l)
				}
			}
		})
	}
	scr := newScreen(200)
	sink := NewTerminalEvents(scr, Text, TerminalOptions{Verbose: true, Size: func() (int, int) { return scr.width, 24 }})
	var plain bytes.Buffer
	text := NewEvents(&plain, Text, EventOptions{Objects: true})
	for _, e := range demoRun() {
		sink.Emit(e)
		text.Emit(e)
	}
	if got, want := strings.Join(scr.text(), "\n"), strings.TrimSpace(plain.String()); got != want {
		t.Errorf("-v: the screen holds:\n%s\nwant the plain lines:\n%s", got, want)
	}
}

// While a run goes on, each component in progress has a live line saying how many of its
// objects are ready and what it waits on, above the bar; a resize to fewer columns, which
// reflows what is on the screen, leaves no piece of a live line behind.
func TestTerminalEventsLive(t *testing.T) {
	scr := newScreen(200)
	sink := NewTerminalEvents(scr, Text, TerminalOptions{Size: func() (int, int) { return scr.width, 24 }}).(*liveSink)
	evs := demoRun()
	var i int
	for i = 0; evs[i].Type != event.Waiting || evs[i].Component != "EgressGateways/istio-egressgateway"; i++ {
		sink.Emit(evs[i])
	}
	sink.Emit(evs[i])
	live := scr.text()
	tail := strings.Join(live[len(live)-3:], "\n")
	for _, want := range []string{
		"Ingress gateways: 2/3 ready, waiting on Deployment/istio-system/istio-ingressgateway: 0 of 1 replicas ready",
		"Egress gateways: 2/3 ready, waiting on Deployment/istio-system/istio-egressgateway: 0 of 1",
		"Installing", "(16/22)",
	} {
		if !strings.Contains(tail, want) {
			t.Errorf("the live lines lack %q:\n%s", want, tail)
		}
	}
	if strings.Contains(strings.Join(live, "\n"), "Istiod: ") {
		t.Errorf("a component that ended kept its live line:\n%s", strings.Join(live, "\n"))
	}
	// Narrower: the terminal reflows, then the view redraws.
	scr.width = 80
	sink.redraw()
	for _, l := range scr.text()[len(scr.text())-3:] {
		if displayWidth(l) > 79 {
			t.Errorf("after the resize a live line is wider than 80 columns: %q", l)
		}
	}
	for _, e := range evs[i+1:] {
		sink.Emit(e)
	}
	for _, l := range scr.text() {
		if strings.Contains(l, "ready, ") || strings.Contains(l, "Installing") {
			t.Errorf("a live line was left behind: %q\n%s", l, strings.Join(scr.text(), "\n"))
		}
	}
}

// A failure's report is printed whole, however wide the terminal.
func TestTerminalEventsFailure(t *testing.T) {
	scr := newScreen(40)
	sink := NewTerminalEvents(scr, Text, TerminalOptions{Size: func() (int, int) { return scr.width, 24 }})
	detail := "Deployment/istio-system/istiod (0 of 1 replicas ready)"
	for _, e := range []event.Event{
		{Type: event.Plan, Total: 1},
		{Type: event.ComponentStarted, Component: "Pilot", Title: "Istiod", Total: 1},
		{Type: event.Applied, Component: "Pilot", Title: "Istiod", Object: "Deployment/istio-system/istiod", ObjectChange: event.ObjectChange{Status: "created", Action: event.ActionCreated}},
		{Type: event.ComponentFailed, Component: "Pilot", Title: "Istiod", Error: "not ready within the readiness timeout (8s):", Details: []string{detail, "  pod istiod-x: unschedulable: 0/2 nodes are available"}},
		{Type: event.ComponentSkipped, Component: "IngressGateways/istio-ingressgateway", Title: "Ingress gateways", Message: "not applied: the readiness deadline passed while waiting for Istiod"},
		{Type: event.Done, Error: "Istiod: not ready", RunEnd: event.RunEnd{Result: event.RunFailed}},
	} {
		sink.Emit(e)
	}
	out := strings.Join(scr.text(), "\n")
	for _, want := range []string{"✘ Istiod failed: not ready within the readiness timeout (8s):", "    " + detail, "      pod istiod-x: unschedulable: 0/2 nodes are available",
		"✘ Ingress gateways not applied: the readiness deadline passed while waiting for Istiod", "✘ Installation failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the failure report lacks %q:\n%s", want, out)
		}
	}
}

// JSON is JSON on a terminal too.
func TestTerminalEventsJSON(t *testing.T) {
	var b bytes.Buffer
	NewTerminalEvents(&b, JSON, TerminalOptions{}).Emit(event.Event{Type: event.Plan, Total: 3})
	if !strings.HasPrefix(b.String(), `{"time":`) || strings.Contains(b.String(), "\r") {
		t.Errorf("json on a terminal: %q", b.String())
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"one too many", 11, "one too ma…"},
		{"\x1b[32m✔\x1b[0m Istiod installed 🧠", 12, "\x1b[32m✔\x1b[0m Istiod in…\x1b[0m"},
		{"wide 🧠 emoji", 7, "wide …"},
	} {
		if got := cut(tc.in, tc.width); got != tc.want {
			t.Errorf("cut(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
		if w := displayWidth(cut(tc.in, tc.width)); w > tc.width {
			t.Errorf("cut(%q, %d) is %d columns wide", tc.in, tc.width, w)
		}
	}
}

// While the run waits for the cluster lock a live line names the holder, with the time
// waited; the next event clears it and leaves the plain lines.
func TestTerminalEventsLockWait(t *testing.T) {
	scr := newScreen(80)
	sink := NewTerminalEvents(scr, Text, TerminalOptions{Size: func() (int, int) { return scr.width, 24 }}).(*liveSink)
	var plain bytes.Buffer
	text := NewEvents(&plain, Text, EventOptions{Objects: true})
	evs := []event.Event{
		{Type: event.Lock, Message: "waiting for the cluster lock: istioctl install of a@b, pid 1 holds it", LockChange: event.LockChange{Lock: event.LockWaiting, Holder: "istioctl install of a@b, pid 1"}},
		{Type: event.Lock, Message: "took the cluster lock after waiting 1s", LockChange: event.LockChange{Lock: event.LockAcquired}},
	}
	sink.Emit(evs[0])
	text.Emit(evs[0])
	sink.redraw()
	live := scr.text()
	if last := live[len(live)-1]; !strings.Contains(last, "Waiting for the cluster lock, held by istioctl install of a@b, pid 1 (") {
		t.Errorf("no live line while waiting for the lock:\n%s", strings.Join(live, "\n"))
	}
	sink.Emit(evs[1])
	text.Emit(evs[1])
	if got, want := strings.Join(scr.text(), "\n"), strings.TrimSpace(plain.String()); got != want {
		t.Errorf("after the lock: the screen holds:\n%s\nwant the plain lines:\n%s", got, want)
	}
	if sink.lockStop != nil {
		t.Error("the lock line's redraws still run")
	}
}
