// Package printer turns engine events and check results into what people and CI read:
// plain lines (colored on a terminal unless NO_COLOR is set) or JSON lines. It decides
// nothing.
package printer

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/fatih/color"

	"github.com/istioctl-installer/istioctl/operator/event"
)

// EventOptions say what the event printers know of what was printed before the run.
type EventOptions struct {
	// PlanShown says the plan's summary was printed before the run (before a prompt, or
	// with -v): the plan event does not print it again.
	PlanShown bool
	// Objects prints a line per object (applied, pruned, waiting, ready) and the plan's
	// counts per component: -v. Without it the plain view is as short as upstream's: a line
	// per component, a line every few seconds of a long wait, warnings and the result.
	Objects bool
}

// NewEvents returns a sink printing events in format f to w. color is honoured only for
// text on a terminal; fatih/color already turns itself off for NO_COLOR and non-terminals.
func NewEvents(w io.Writer, f Format, opts ...EventOptions) event.Sink {
	if f == JSON || f == YAML {
		return &streamSink{w: w, f: stream(f)}
	}
	s := &textSink{w: w}
	for _, o := range opts {
		s.planShown = s.planShown || o.PlanShown
		s.objects = s.objects || o.Objects
	}
	return s
}

// NewTerminalEvents is NewEvents for a person at a terminal (see liveSink): a live line per
// component in progress and a progress bar, cut to the terminal's width, under the lines
// that stay. Use it only when w is a terminal; logs get no bar, so CI output has no spinner
// lines.
func NewTerminalEvents(w io.Writer, f Format, opts TerminalOptions) event.Sink {
	if f == JSON || f == YAML {
		return NewEvents(w, f)
	}
	return newLiveSink(w, opts)
}

// streamSink writes each event as a document of the stream: a JSON line, or a YAML document.
type streamSink struct {
	mu sync.Mutex
	w  io.Writer
	f  Format
}

func (s *streamSink) Emit(e event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = encode(s.w, s.f, e, encoding{})
}

var (
	green  = color.New(color.FgGreen).SprintFunc()
	red    = color.New(color.FgRed).SprintFunc()
	yellow = color.New(color.FgYellow).SprintFunc()
	cyan   = color.New(color.FgCyan).SprintFunc()
	faint  = color.New(color.Faint).SprintFunc()
)

// textSink prints one line per event worth a line: components ending, warnings, and the
// outcome; with objects, also components starting and every object applied, waited on
// (once per new reason), ready or pruned. Without objects, a component's wait gets a line
// once it has lasted waitLineEvery, and at most one per waitLineEvery after that, timed by
// the events' own times (so a recorded stream prints the same lines).
type textSink struct {
	mu sync.Mutex
	w  io.Writer
	// planShown: the plan's summary was printed before the run (EventOptions).
	planShown bool
	// objects: a line per object (EventOptions.Objects).
	objects bool
	// started and waitLine are, per cluster and component, when it started and when its
	// last wait line was.
	started, waitLine map[string]time.Time
}

// plan prints what an uninstall leaves alone and the counts, unless printed before the
// run (the plan's size drives the terminal's progress bar instead).
func (s *textSink) plan(e event.Event) {
	if s.planShown {
		return
	}
	Leaving(s.w, e.Leave)
	if len(e.Details) > 0 {
		// A revision upgrade's plan: the move, then each write into the user's objects.
		fmt.Fprintf(s.w, "- %s\n", e.Message)
		for _, d := range e.Details {
			fmt.Fprintf(s.w, "    %s\n", d)
		}
	}
	if e.Changes != nil {
		lines := summaryLines(e.Changes, nil, false)
		if !s.objects {
			lines = lines[:1] // the counts per component with -v
		}
		io.WriteString(s.w, strings.Join(lines, "\n")+"\n")
	}
	nodeBatches(s.w, e.Plan)
}

// waitLineEvery spaces the wait lines of the short plain view.
const waitLineEvery = 5 * time.Second

func (s *textSink) Emit(e event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	title := e.Title
	if title == "" {
		title = e.Component
	}
	if e.Type == event.Plan && e.DryRun {
		s.objects = true // a dry run's object lines are its report
	}
	// An uninstall's removals are its report, as upstream's "Removed" lines are.
	removal := e.Type == event.Pruned && e.Action == event.ActionRemoved
	if !s.objects && !shows(e, false) && !removal {
		s.shortWait(e, title)
		return
	}
	switch e.Type {
	case event.Plan:
		s.plan(e)
	case event.ComponentStarted:
		fmt.Fprintf(s.w, "- Applying %s\n", title)
	case event.Applied:
		if e.Action != event.ActionUnchanged {
			fmt.Fprintf(s.w, "  %s %s\n", faint(e.Object), faint(e.Status))
		}
		for _, d := range e.Details {
			fmt.Fprintf(s.w, "    %s\n", diffLine(d))
		}
	case event.Waiting:
		fmt.Fprintf(s.w, "  %s waiting: %s\n", e.Object, e.Message)
	case event.Ready:
		fmt.Fprintf(s.w, "  %s ready\n", e.Object)
	case event.ComponentReady:
		fmt.Fprintf(s.w, "%s %s installed %s\n", green("✔"), title, e.Icon)
	case event.ComponentFailed:
		fmt.Fprintf(s.w, "%s %s failed: %s\n", red("✘"), title, firstLine(e.Error))
		for _, d := range e.Details {
			fmt.Fprintf(s.w, "    %s\n", d)
		}
	case event.ComponentSkipped:
		fmt.Fprintf(s.w, "%s %s %s\n", red("✘"), title, e.Message)
	case event.NodeBatchStarted:
		fmt.Fprintf(s.w, "- %s: replacing the pods on %s (node batch %d of %d)\n", title, strings.Join(e.Nodes, ", "), e.Batch, e.Batches)
	case event.NodeBatchReady:
		fmt.Fprintf(s.w, "  %s %s: %s on the new version (node batch %d of %d)\n", green("✔"), title, strings.Join(e.Nodes, ", "), e.Batch, e.Batches)
	case event.NodeBatchFailed:
		fmt.Fprintf(s.w, "  %s %s: node batch %d of %d (%s) failed: %s\n", red("✘"), title, e.Batch, e.Batches, strings.Join(e.Nodes, ", "), firstLine(e.Error))
	case event.Pruned:
		status := "removed"
		if e.Status != "" {
			status = e.Status
		}
		fmt.Fprintf(s.w, "  %s %s\n", e.Object, status)
	case event.Check:
		fmt.Fprintf(s.w, "%s %s: %s\n", green("✔"), e.Object, e.Message)
	case event.Warning:
		if e.Object == "" {
			fmt.Fprintf(s.w, "%s %s\n", yellow("!"), e.Message)
		} else {
			fmt.Fprintf(s.w, "%s %s: %s\n", yellow("!"), e.Object, e.Message)
		}
		for _, d := range e.Details {
			fmt.Fprintf(s.w, "    %s\n", d)
		}
	case event.WatchStalled:
		s.watchStalled(e)
	case event.RevisionTag:
		mark := green("✔")
		if e.TagOutcome == event.TagMoved {
			mark = yellow("!")
		}
		fmt.Fprintf(s.w, "%s %s\n", mark, e.Message)
		for _, d := range e.Details {
			fmt.Fprintf(s.w, "  %s\n", d)
		}
	case event.HelmReleaseRetired:
		s.helmReleaseRetired(e)
	case event.Kept:
		s.kept(e)
	case event.RestorePlan:
		s.restorePlan(e)
	case event.Restored:
		s.restored(e)
	case event.Skipped:
		s.skipped(e)
	case event.Batch:
		if e.BatchResult == event.RunSucceeded {
			fmt.Fprintf(s.w, "%s %s\n", green("✔"), e.Message)
		} else {
			fmt.Fprintf(s.w, "%s %s: %s\n", red("✘"), e.Message, e.Error)
		}
	case event.Lock:
		s.lock(e)
	case event.Done:
		s.done(e)
	}
}

// shortWait prints, in the short view, a line for a component's wait that has lasted
// waitLineEvery since the component started or since its last such line.
func (s *textSink) shortWait(e event.Event, title string) {
	key := e.Cluster + "/" + e.Component
	switch e.Type {
	case event.ComponentStarted:
		if s.started == nil {
			s.started, s.waitLine = map[string]time.Time{}, map[string]time.Time{}
		}
		s.started[key], s.waitLine[key] = e.Time, e.Time
	case event.Waiting:
		last, ok := s.waitLine[key]
		if !ok || e.Time.Sub(last) < waitLineEvery {
			return
		}
		s.waitLine[key] = e.Time
		fmt.Fprintf(s.w, "  %s: waiting %s for %s: %s\n", title, e.Time.Sub(s.started[key]).Round(time.Second), e.Object, e.Message)
	}
}

// done is a run's last line: how it ended, worded for its operation.
func (s *textSink) done(e event.Event) {
	switch {
	case e.Result == event.RunInterrupted:
		fmt.Fprintf(s.w, "%s Interrupted\n", red("✘"))
	case e.DryRun && e.Result == event.RunSucceeded:
		fmt.Fprintf(s.w, "%s Dry run complete, nothing was written (%s)\n", green("✔"), e.Message)
	case e.Operation == event.OperationRollback && e.Result == event.RunFailed:
		fmt.Fprintf(s.w, "%s Rollback to %s failed\n", red("✘"), e.Message)
	case e.Operation == event.OperationRollback:
		fmt.Fprintf(s.w, "%s Rollback to %s\n", green("✔"), e.Message)
	case e.Operation == event.OperationUninstall && e.Result == event.RunSucceeded:
		fmt.Fprintf(s.w, "%s Uninstall complete (%s)\n", green("✔"), e.Message)
	case e.Result == event.RunFailed:
		fmt.Fprintf(s.w, "%s Installation failed\n", red("✘"))
	default:
		fmt.Fprintf(s.w, "%s Installation complete (%s)\n", green("✔"), e.Message)
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// diffLine colours one line of a unified diff.
func diffLine(l string) string {
	switch {
	case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		return l
	case strings.HasPrefix(l, "+"):
		return green(l)
	case strings.HasPrefix(l, "-"):
		return red(l)
	}
	return l
}

// keptWords say why a delete left an object (a kept event).
var keptWords = map[event.KeptReason]string{
	event.KeptOptOut:    "it was opted out of pruning (owning-resource-not-pruned) after the plan read it",
	event.KeptRecreated: "it was deleted and created again by someone else after the plan read it (another UID)",
	event.KeptNotOurs:   "it is no longer this install's: its labels or field managers changed after the plan read it",
	// a fleet's links
	event.KeptSameCluster: "the context its link names is not the fleet file's, but the cluster is (the same kube-system UID)",
	event.KeptNoIdentity:  "its link records no cluster identity (an older istioctl wrote it): a context name alone proves no cluster left the fleet",
	event.KeptUnproven:    "that the cluster left the fleet is not proven",
	event.KeptNotALink:    "it carries the fleet's label but is no link Secret istioctl wrote (the istio/multiCluster label and an apply by istioctl-remote-secret)",
}

// kept is an object a delete left, and why.
func (s *textSink) kept(e event.Event) {
	what := e.Object
	if what == "" {
		what = "links" // a fleet's links in a cluster it no longer names
	}
	fmt.Fprintf(s.w, "%s %s kept: %s\n", yellow("!"), what, keptWords[e.KeptReason])
	if e.Message != "" {
		fmt.Fprintf(s.w, "    %s\n", e.Message)
	}
}

// watchStalled names a silent watch, since when, what it missed and what to check.
func (s *textSink) watchStalled(e event.Event) {
	since := ""
	if !e.LastHeard.IsZero() && !e.Time.IsZero() {
		since = fmt.Sprintf(" for %s", e.Time.Sub(e.LastHeard).Round(time.Second))
	}
	fmt.Fprintf(s.w, "%s watch stalled: %s delivered nothing%s: %s\n", yellow("!"), e.Watch, since, e.Message)
	for _, d := range e.Details {
		fmt.Fprintf(s.w, "    %s\n", d)
	}
}

// skipped is an entry of a revision upgrade's record it left, and why.
func (s *textSink) skipped(e event.Event) {
	why := skipWords[e.SkipReason]
	if e.Message != "" {
		why += " (" + e.Message + ")"
	}
	fmt.Fprintf(s.w, "%s %s skipped: %s\n", yellow("!"), e.Object, why)
}

// restorePlan is --atomic's restore plan: the objects given back, then the objects removed,
// a line each, and what follows.
func (s *textSink) restorePlan(e event.Event) {
	fmt.Fprintf(s.w, "- --atomic restore: %d objects given back as they were before this run, %d removed\n", len(e.GiveBack), len(e.Remove))
	for _, o := range e.GiveBack {
		fmt.Fprintf(s.w, "    give back %s\n", o)
	}
	for _, o := range e.Remove {
		fmt.Fprintf(s.w, "    remove %s\n", o)
	}
	if e.Message != "" {
		fmt.Fprintf(s.w, "  %s\n", upperFirst(e.Message))
	}
}

// restored is one object of a restore's give-back.
func (s *textSink) restored(e event.Event) {
	switch e.RestoreOutcome {
	case event.RestoreGivenBack:
		fmt.Fprintf(s.w, "  %s %s given back to %s\n", green("✔"), e.Object, e.Message)
	case event.RestoreFailed:
		fmt.Fprintf(s.w, "  %s %s not given back: %s\n", red("✘"), e.Object, firstLine(e.Error))
	default:
		fmt.Fprintf(s.w, "  %s %s not given back: %s\n", yellow("!"), e.Object, notGivenBackWords[e.RestoreOutcome])
	}
}

// notGivenBackWords say why a restore left an object that existed before the run.
var notGivenBackWords = map[event.RestoreOutcome]string{
	event.RestoreGone:      "it no longer exists (the restore never creates it again)",
	event.RestoreRecreated: "it was deleted and created again by someone else during the run (another UID)",
}

// skipWords say why a revision upgrade left an entry of its record (a skipped event).
var skipWords = map[event.SkipReason]string{
	event.SkipDeleted:           "it was deleted since the revision upgrade recorded it",
	event.SkipNotInjected:       "none of its pods is injected by the old or the new revision anymore",
	event.SkipOutsideNamespaces: "it is outside --namespaces: a run without them moves it",
	event.SkipLabelChanged:      "its istio.io/rev label changed since the revision upgrade recorded it, so it is left as it is",
}

// helmReleaseRetired is a retired (or, in a dry run, to be retired) Helm release and its
// records.
func (s *textSink) helmReleaseRetired(e event.Event) {
	mark := green("✔")
	if e.DryRun {
		mark = "-"
	}
	fmt.Fprintf(s.w, "%s Helm release %s %s: %s\n", mark, e.Object, e.Wording(), e.Message)
	for _, d := range e.Details {
		fmt.Fprintf(s.w, "  %s\n", d)
	}
}

// lock is one line of the cluster lock's: lost, taken over, waiting or acquired.
func (s *textSink) lock(e event.Event) {
	switch e.Lock {
	case event.LockLost:
		fmt.Fprintf(s.w, "%s %s\n", red("✘"), upperFirst(firstLine(e.Error)))
	case event.LockTakenOver:
		fmt.Fprintf(s.w, "%s %s\n", yellow("!"), upperFirst(e.Message))
	default:
		fmt.Fprintf(s.w, "- %s\n", upperFirst(e.Message))
	}
}

// nodeBatches is a line per component an upgrade rolls node by node: after what, and its
// node batches in order.
func nodeBatches(w io.Writer, plan []event.PlannedComponent) {
	for _, c := range plan {
		if len(c.NodeBatches) == 0 {
			continue
		}
		batches := make([]string, len(c.NodeBatches))
		for i, b := range c.NodeBatches {
			batches[i] = strings.Join(b, ", ")
		}
		title := c.Title
		if title == "" {
			title = c.Component
		}
		fmt.Fprintf(w, "- %s after %s, node by node in %d batches: %s\n", title, strings.Join(c.Parents, ", "), len(batches), strings.Join(batches, " | "))
	}
}
