package printer

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/istioctl-installer/istioctl/operator/event"
)

// TerminalOptions tune the terminal view.
type TerminalOptions struct {
	EventOptions
	// Verbose prints every object's line above the live lines, as the plain view does.
	Verbose bool
	// Size returns the terminal's width and height; nil reads them from w (a terminal file).
	Size func() (width, height int)
}

// liveSink is the terminal view of a run. The lines that stay (the plan's counts, each
// component's ✔ or ✘ line, checks, warnings, a failure's report, the result) scroll up as
// in the plain view; under them, redrawn in place while the run goes on, one line per
// component in progress (how many of its objects are ready, what it waits on) and a
// progress bar. Object lines (applied, waiting, ready, pruned) print only with Verbose, or
// in a dry run, whose report they are.
//
// Every redrawn line, and every one-line result, is cut to the terminal's width, read
// again on each drawing and when the window is resized (SIGWINCH), so no redraw wraps. The
// live lines are cleared by moving the cursor up over the rows they take at the width the
// terminal has now: a terminal that reflows its lines on resize (tmux, VTE, iTerm2) may
// have split one line into several. Warnings and failure reports are printed once and not
// cut: the terminal wraps them, and all of their text stays.
//
// The region is hand-written: schollz/progressbar draws one line and clears it with
// spaces of the width it last drew, which leaves broken lines behind once a resize has
// reflowed them; it still renders the bar itself.
type liveSink struct {
	mu      sync.Mutex
	w       io.Writer
	size    func() (int, int)
	verbose bool
	text    *textSink
	buf     bytes.Buffer
	// bar is set while a run goes on (from its plan event to its done event).
	bar *progressbar.ProgressBar
	// objects says object lines print: Verbose, or a dry run.
	objects bool
	comps   []*liveComponent
	// drawn are the live lines on the screen now, as drawn.
	drawn []string
	frame int
	stop  chan struct{}
	// lockDesc is the live line while the run waits for the cluster lock (before its
	// plan), since when, and its redraws' end.
	lockDesc  string
	lockSince time.Time
	lockStop  chan struct{}
}

// liveComponent is a component in progress.
type liveComponent struct {
	key, title     string
	total, applied int
	// waiting holds the objects reported not ready, with why; last is the newest.
	waiting map[string]string
	last    string
}

// redrawEvery moves the spinner and the elapsed time while nothing else happens.
const redrawEvery = 250 * time.Millisecond

var spinner = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

func newLiveSink(w io.Writer, opts TerminalOptions) *liveSink {
	s := &liveSink{w: w, size: opts.Size, verbose: opts.Verbose}
	// The live view chooses the lines that stay (shows); its text sink prints each in full.
	s.text = &textSink{w: &s.buf, planShown: opts.PlanShown, objects: true}
	if s.size == nil {
		s.size = func() (int, int) { return terminalSize(w) }
	}
	return s
}

// terminalSize is w's size, 80×24 when it cannot be read.
func terminalSize(w io.Writer) (int, int) {
	if f, ok := w.(*os.File); ok {
		if width, height, err := term.GetSize(int(f.Fd())); err == nil && width > 0 && height > 0 {
			return width, height
		}
	}
	return 80, 24
}

func (s *liveSink) Emit(e event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out bytes.Buffer
	if e.Type == event.Lock && e.Lock == event.LockWaiting && s.bar == nil {
		s.clear(&out)
		s.lines(&out, e)
		s.waitLock(e)
		s.draw(&out)
		_, _ = s.w.Write(out.Bytes())
		return
	}
	if s.lockDesc != "" {
		s.clear(&out)
		s.endLockWait()
	}
	if s.bar == nil {
		// Before a run's plan and after its done: lines only, as the plain view.
		s.lines(&out, e)
		if e.Type == event.Plan && e.Total > 0 {
			s.start(e)
			s.draw(&out)
		}
		_, _ = s.w.Write(out.Bytes())
		return
	}
	s.track(e)
	s.clear(&out)
	if s.shows(e) {
		s.lines(&out, e)
	}
	if e.Type == event.Done {
		s.finish()
	} else {
		s.draw(&out)
	}
	_, _ = s.w.Write(out.Bytes())
}

func (s *liveSink) start(e event.Event) {
	verb := "Installing"
	if e.DryRun {
		verb = "Checking"
	}
	s.objects = s.verbose || e.DryRun
	s.comps = nil
	s.bar = progressbar.NewOptions(2*e.Total,
		progressbar.OptionSetWriter(io.Discard),
		progressbar.OptionSetDescription(verb),
		progressbar.OptionSetWidth(20),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetElapsedTime(true),
	)
	s.stop = make(chan struct{})
	go s.tick(s.stop)
	go s.onResize(s.stop)
}

// waitLock starts the live line shown while the run waits for the cluster lock, with the
// time waited, until the next event.
func (s *liveSink) waitLock(e event.Event) {
	s.endLockWait()
	s.lockDesc, s.lockSince = "Waiting for the cluster lock", time.Now()
	if e.Holder != "" {
		s.lockDesc += ", held by " + e.Holder
	}
	s.lockStop = make(chan struct{})
	go s.tick(s.lockStop)
	go s.onResize(s.lockStop)
}

func (s *liveSink) endLockWait() {
	if s.lockStop != nil {
		close(s.lockStop)
	}
	s.lockDesc, s.lockStop, s.drawn = "", nil, nil
}

func (s *liveSink) finish() {
	close(s.stop)
	s.bar, s.comps, s.drawn = nil, nil, nil
}

// tick redraws the live lines now and then: the spinner and the elapsed time move during
// long waits.
func (s *liveSink) tick(stop chan struct{}) { tick(stop, s.redraw) }

// tick calls redraw every redrawEvery until stop closes.
func tick(stop chan struct{}, redraw func()) {
	t := time.NewTicker(redrawEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			redraw()
		}
	}
}

// redraw draws the live lines again, at the terminal's width now.
func (s *liveSink) redraw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bar == nil && s.lockDesc == "" {
		return
	}
	s.frame++
	var out bytes.Buffer
	s.clear(&out)
	s.draw(&out)
	_, _ = s.w.Write(out.Bytes())
}

// track keeps the live state: the components in progress, their objects, the bar.
func (s *liveSink) track(e event.Event) {
	c := s.component(e.Component)
	switch e.Type {
	case event.ComponentStarted:
		s.comps = append(s.comps, &liveComponent{key: e.Component, title: titleOf(e), total: e.Total, waiting: map[string]string{}})
	case event.Applied:
		if c != nil {
			c.applied++
			_ = s.bar.Add(1)
		}
	case event.Waiting:
		if c != nil {
			c.waiting[e.Object], c.last = e.Message, e.Object
		}
	case event.Ready:
		if c != nil {
			delete(c.waiting, e.Object)
		}
	case event.ComponentReady, event.ComponentFailed, event.ComponentSkipped:
		if c != nil {
			_ = s.bar.Add(c.total)
			for i := range s.comps {
				if s.comps[i] == c {
					s.comps = append(s.comps[:i], s.comps[i+1:]...)
					break
				}
			}
		}
	}
}

func (s *liveSink) component(key string) *liveComponent {
	if key == "" {
		return nil
	}
	for _, c := range s.comps {
		if c.key == key {
			return c
		}
	}
	return nil
}

// shows says whether e prints a line that stays while a run goes on: object lines only
// with Verbose or in a dry run (a namespace's wait has no live line, so it always prints);
// a component's start is its live line.
func (s *liveSink) shows(e event.Event) bool { return shows(e, s.objects) }

// shows says whether e prints a line that stays on a live view; objects: object lines do.
func shows(e event.Event, objects bool) bool {
	switch e.Type {
	case event.ComponentStarted, event.Applied, event.Ready, event.Pruned, event.NodeBatchStarted:
		return objects
	case event.Waiting:
		return objects || e.Component == ""
	}
	return true
}

// lines writes e's plain lines to out: the first cut to the terminal's width, except a
// warning's, a failure's and a skipped component's (why it was not applied), whose every
// word is the report; the plan's counts all cut.
func (s *liveSink) lines(out *bytes.Buffer, e event.Event) {
	s.buf.Reset()
	s.text.Emit(e)
	if s.buf.Len() == 0 {
		return
	}
	width, _ := s.size()
	for i, l := range strings.Split(strings.TrimSuffix(s.buf.String(), "\n"), "\n") {
		if e.Type == event.Plan || (i == 0 && !whole(e.Type)) {
			l = cut(l, width-1)
		}
		out.WriteString(l + "\n")
	}
}

// whole says the lines of an event of type t are a report, never cut.
func whole(t event.Type) bool {
	return t == event.Warning || t == event.ComponentFailed || t == event.ComponentSkipped || t == event.Batch || t == event.NodeBatchFailed || t == event.Kept ||
		t == event.RestorePlan || t == event.Restored ||
		t == event.Skipped || t == event.WatchStalled
}

// draw writes the live lines, each cut to the terminal's width and ended by a newline, so
// the cursor rests at the start of the row under them.
func (s *liveSink) draw(out *bytes.Buffer) {
	width, height := s.size()
	if s.bar == nil {
		l := fmt.Sprintf("%c %s (%s)", spinner[s.frame%len(spinner)], s.lockDesc, time.Since(s.lockSince).Truncate(time.Second))
		l = cut(l, width-1)
		out.WriteString(l + "\n")
		s.drawn = []string{l}
		return
	}
	var lines []string
	most := max(1, height/2-1)
	for i, c := range s.comps {
		if i == most {
			lines = append(lines, fmt.Sprintf("  … and %d more components", len(s.comps)-i))
			break
		}
		lines = append(lines, c.line(spinner[s.frame%len(spinner)]))
	}
	_ = s.bar.RenderBlank()
	lines = append(lines, strings.TrimSpace(strings.TrimPrefix(s.bar.String(), "\r")))
	for i := range lines {
		lines[i] = cut(lines[i], width-1)
		out.WriteString(lines[i] + "\n")
	}
	s.drawn = lines
}

// clear removes the live lines: up over the rows they take at the width the terminal has
// now (a resize may have reflowed one line into several), then erase to the screen's end.
func (s *liveSink) clear(out *bytes.Buffer) {
	width, _ := s.size()
	clearDrawn(out, s.drawn, width)
	s.drawn = nil
}

// clearDrawn writes what removes the lines drawn, at the terminal's width now.
func clearDrawn(out *bytes.Buffer, drawn []string, width int) {
	if len(drawn) == 0 {
		return
	}
	rows := 0
	for _, l := range drawn {
		rows += max(1, (displayWidth(l)+width-1)/width)
	}
	fmt.Fprintf(out, "\x1b[%dA\r\x1b[J", rows)
}

// line is the component's live line: how many of its objects are ready, and what it is
// doing (the newest reason it waits on, or applying).
func (c *liveComponent) line(frame rune) string {
	ready := c.applied - len(c.waiting)
	doing := "checking readiness"
	switch {
	case len(c.waiting) > 0:
		obj := c.last
		if _, ok := c.waiting[obj]; !ok {
			var objs []string
			for o := range c.waiting {
				objs = append(objs, o)
			}
			sort.Strings(objs)
			obj = objs[0]
		}
		doing = "waiting on " + obj + ": " + c.waiting[obj]
	case c.applied < c.total:
		doing = "applying"
	}
	return fmt.Sprintf("%c %s: %d/%d ready, %s", frame, c.title, ready, c.total, doing)
}

func titleOf(e event.Event) string {
	if e.Title != "" {
		return e.Title
	}
	return e.Component
}
