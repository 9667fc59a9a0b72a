package printer

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/istioctl-installer/istioctl/operator/event"
)

// NewFleetEvents prints a fleet run's events: with JSON, one line per event as NewEvents
// (each carries its cluster); as text, each cluster's lines as a single-cluster run prints
// them, prefixed with the cluster, then a table of what happened to each cluster and link.
// With live (a terminal), object lines are left out and under the lines that stay one live
// line per cluster in progress is redrawn, cut to the terminal's width.
func NewFleetEvents(w io.Writer, f Format, live bool, opts TerminalOptions) event.Sink {
	if f == JSON || f == YAML {
		return NewEvents(w, f)
	}
	s := &fleetSink{w: w, live: live, objects: opts.Verbose, size: opts.Size, sinks: map[string]*textSink{}, clusters: map[string]*liveCluster{}}
	if s.size == nil {
		s.size = func() (int, int) { return terminalSize(w) }
	}
	return s
}

type fleetSink struct {
	mu      sync.Mutex
	w       io.Writer
	live    bool
	objects bool
	size    func() (int, int)
	sinks   map[string]*textSink
	buf     bytes.Buffer
	// clusters are the clusters in progress (live), in the order they started.
	clusters map[string]*liveCluster
	order    []string
	drawn    []string
	frame    int
	stop     chan struct{}
}

// liveCluster is a cluster in progress: its components in progress, or what it does.
type liveCluster struct {
	comps []*liveComponent
	doing string
}

func (s *fleetSink) Emit(e event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out bytes.Buffer
	s.clear(&out)
	switch {
	case e.Type == event.Done && e.Cluster == "" && e.Fleet != nil:
		s.stopLive()
		fleetOutcome(&out, e)
	case e.Type == event.Link:
		s.line(&out, e.Cluster, linkLine(e), false)
	default:
		s.track(e)
		// Plain, each cluster's text sink chooses its lines as a single cluster's does.
		if !s.live || shows(e, s.objects) {
			s.clusterLines(&out, e)
		}
	}
	s.draw(&out)
	_, _ = s.w.Write(out.Bytes())
}

// clusterLines prints e as a single-cluster run would, each line prefixed with its cluster.
func (s *fleetSink) clusterLines(out *bytes.Buffer, e event.Event) {
	ts := s.sinks[e.Cluster]
	if ts == nil {
		ts = &textSink{w: &s.buf, objects: s.live || s.objects}
		s.sinks[e.Cluster] = ts
	}
	s.buf.Reset()
	ts.Emit(e)
	if s.buf.Len() == 0 {
		return
	}
	for i, l := range strings.Split(strings.TrimSuffix(s.buf.String(), "\n"), "\n") {
		s.line(out, e.Cluster, l, i > 0 || whole(e.Type))
	}
}

// line writes one line that stays, with its cluster's prefix; live, cut to the width
// unless it is part of a report (whole).
func (s *fleetSink) line(out *bytes.Buffer, cluster, l string, whole bool) {
	if cluster != "" {
		l = faint("["+cluster+"]") + " " + l
	}
	if s.live && !whole {
		width, _ := s.size()
		l = cut(l, width-1)
	}
	out.WriteString(l + "\n")
}

func linkLine(e event.Event) string {
	switch {
	case e.Error != "":
		return fmt.Sprintf("%s %s %s: %s", red("✘"), e.Object, e.LinkOutcome, firstLine(e.Error))
	case e.LinkOutcome == event.LinkRemoved:
		return fmt.Sprintf("%s %s removed (%s)", green("✔"), e.Object, e.Message)
	}
	return fmt.Sprintf("%s %s %s (%s)", green("✔"), e.Object, e.LinkOutcome, e.Message)
}

// track keeps each cluster's live state (live only): from its plan to its done.
func (s *fleetSink) track(e event.Event) {
	if !s.live || e.Cluster == "" {
		return
	}
	c := s.clusters[e.Cluster]
	switch {
	case c == nil && (e.Type == event.Plan || e.Type == event.Lock):
		c = &liveCluster{doing: "starting"}
		s.clusters[e.Cluster] = c
		s.order = append(s.order, e.Cluster)
		s.startLive()
	case c == nil:
		return
	}
	switch e.Type {
	case event.Lock:
		c.doing = "waiting for the cluster lock"
		if e.Holder != "" {
			c.doing += ", held by " + e.Holder
		}
	case event.Plan:
		c.doing = "applying"
	case event.Done:
		delete(s.clusters, e.Cluster)
		for i, n := range s.order {
			if n == e.Cluster {
				s.order = append(s.order[:i], s.order[i+1:]...)
				break
			}
		}
	case event.ComponentStarted:
		c.comps = append(c.comps, &liveComponent{key: e.Component, title: titleOf(e), total: e.Total, waiting: map[string]string{}})
	default:
		c.trackComponent(e)
	}
}

func (c *liveCluster) trackComponent(e event.Event) {
	var comp *liveComponent
	for _, lc := range c.comps {
		if lc.key == e.Component && e.Component != "" {
			comp = lc
		}
	}
	if comp == nil {
		return
	}
	switch e.Type {
	case event.Applied:
		comp.applied++
	case event.Waiting:
		comp.waiting[e.Object], comp.last = e.Message, e.Object
	case event.Ready:
		delete(comp.waiting, e.Object)
	case event.ComponentReady, event.ComponentFailed, event.ComponentSkipped:
		for i := range c.comps {
			if c.comps[i] == comp {
				c.comps = append(c.comps[:i], c.comps[i+1:]...)
				break
			}
		}
	}
}

func (s *fleetSink) startLive() {
	if s.stop != nil {
		return
	}
	s.stop = make(chan struct{})
	go tick(s.stop, s.redraw)
	go onResize(s.stop, s.redraw)
}

func (s *fleetSink) stopLive() {
	if s.stop != nil {
		close(s.stop)
	}
	s.stop, s.clusters, s.order = nil, map[string]*liveCluster{}, nil
}

func (s *fleetSink) redraw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop == nil {
		return
	}
	s.frame++
	var out bytes.Buffer
	s.clear(&out)
	s.draw(&out)
	_, _ = s.w.Write(out.Bytes())
}

// draw writes one live line per cluster in progress, each cut to the width.
func (s *fleetSink) draw(out *bytes.Buffer) {
	if !s.live || len(s.order) == 0 {
		return
	}
	width, height := s.size()
	frame := spinner[s.frame%len(spinner)]
	var lines []string
	most := max(1, height/2-1)
	for i, name := range s.order {
		if i == most {
			lines = append(lines, fmt.Sprintf("  … and %d more clusters", len(s.order)-i))
			break
		}
		c := s.clusters[name]
		l := fmt.Sprintf("%c %s: %s", frame, name, c.doing)
		if len(c.comps) > 0 {
			l = fmt.Sprintf("%c %s: %s", frame, name, strings.TrimPrefix(c.comps[0].line(frame), string(frame)+" "))
			if n := len(c.comps) - 1; n > 0 {
				l += fmt.Sprintf(" (+%d more)", n)
			}
		}
		lines = append(lines, cut(l, width-1))
	}
	for _, l := range lines {
		out.WriteString(l + "\n")
	}
	s.drawn = lines
}

// clear removes the live lines, as liveSink.clear.
func (s *fleetSink) clear(out *bytes.Buffer) {
	width, _ := s.size()
	clearDrawn(out, s.drawn, width)
	s.drawn = nil
}

// fleetOutcome prints the table of a fleet run's clusters and links, and its verdict.
func fleetOutcome(out io.Writer, e event.Event) {
	FleetOutcome(out, e.Fleet)
	verb := "install"
	if e.Operation == event.OperationUninstall {
		verb = "uninstall"
	}
	switch {
	case e.Result == event.RunInterrupted:
		fmt.Fprintf(out, "%s Fleet %s interrupted\n", red("✘"), verb)
	case e.Error != "":
		// The error itself, with every line, is the command's error (on stderr).
		fmt.Fprintf(out, "%s Fleet %s failed: %s\n", red("✘"), verb, failedCount(e.Fleet))
	default:
		fmt.Fprintf(out, "%s Fleet %s complete (%s)\n", green("✔"), verb, e.Message)
	}
}

// FleetOutcome prints a row per cluster (cluster, role, outcome, time) and per link.
func FleetOutcome(w io.Writer, o *event.FleetOutcome) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tROLE\tOUTCOME\tTIME")
	for _, c := range o.Clusters {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1fs\n", c.Cluster, c.Role, c.Outcome, c.Seconds)
	}
	if len(o.Links) > 0 {
		fmt.Fprintln(tw, "\nLINK\tIN\tFROM\tOUTCOME")
		for _, l := range o.Links {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.Secret, l.Into, l.From, l.Outcome)
		}
	}
	_ = tw.Flush()
}

// FleetPlanCluster is one cluster's part of a fleet plan: its change summary, or why it
// cannot be planned; Nothing when an uninstall finds nothing there.
type FleetPlanCluster struct {
	Name, Role, Error, Nothing string
	Summary                    *event.Summary
	// Notes are what the run does there beyond the summary.
	Notes []string
}

// FleetPlanLink is one link step of a fleet plan: create, check or remove.
type FleetPlanLink struct {
	Into, From, Secret string
	Action             event.LinkStep
}

// FleetPlanKept is what a fleet run leaves that a context name or a label alone would have
// had it delete (Object "": the links in Cluster), and why.
type FleetPlanKept struct {
	Cluster, Object, Message string
	Reason                   event.KeptReason
}

// FleetPlan prints what a fleet run will do, before it asks: each cluster's change summary
// under its name, then the links, then what it keeps.
func FleetPlan(w io.Writer, clusters []FleetPlanCluster, links []FleetPlanLink, kept ...FleetPlanKept) {
	fleetPlanClusters(w, clusters, links)
	if len(kept) == 0 {
		return
	}
	fmt.Fprintln(w, "Kept:")
	for _, k := range kept {
		what := k.Object
		if what == "" {
			what = "its links"
		}
		fmt.Fprintf(w, "  %s %s in %s: %s\n", yellow("!"), what, k.Cluster, keptWords[k.Reason])
		if k.Message != "" {
			fmt.Fprintf(w, "    %s\n", k.Message)
		}
	}
}

func fleetPlanClusters(w io.Writer, clusters []FleetPlanCluster, links []FleetPlanLink) {
	for _, c := range clusters {
		fmt.Fprintf(w, "Cluster %s (%s):\n", c.Name, c.Role)
		switch {
		case c.Error != "":
			fmt.Fprintf(w, "  %s %s\n", red("✘"), c.Error)
		case c.Nothing != "":
			fmt.Fprintf(w, "  %s\n", c.Nothing)
		case c.Summary != nil:
			for _, l := range summaryLines(&c.Summary.Changes, c.Summary, false) {
				fmt.Fprintf(w, "  %s\n", l)
			}
		}
		for _, n := range c.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	if len(links) == 0 {
		return
	}
	fmt.Fprintln(w, "Links:")
	for _, l := range links {
		mark, what := green("+"), "to create"
		switch l.Action {
		case event.LinkStepCheck:
			mark, what = " ", "there: kept while its token authenticates, else its token is replaced"
		case event.LinkStepRemove:
			mark, what = red("-"), "to remove"
		}
		from := ""
		if l.From != "" {
			from = ", " + l.From + "'s credentials"
		}
		fmt.Fprintf(w, "  %s %s in %s%s: %s\n", mark, l.Secret, l.Into, from, what)
	}
}

// failedCount words what did not converge: "1 cluster and 2 links did not converge".
func failedCount(o *event.FleetOutcome) string {
	var clusters, links int
	for _, c := range o.Clusters {
		if c.Error != "" {
			clusters++
		}
	}
	for _, l := range o.Links {
		if l.Error != "" {
			links++
		}
	}
	var parts []string
	if clusters > 0 {
		parts = append(parts, plural(clusters, "cluster"))
	}
	if links > 0 {
		parts = append(parts, plural(links, "link"))
	}
	if len(parts) == 0 {
		return "see the error"
	}
	return strings.Join(parts, " and ") + " did not converge"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
