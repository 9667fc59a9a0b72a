package printer

import (
	"fmt"
	"io"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/event"
)

// Summary prints what a run will do before it asks (or, with -v, before it starts): the
// counts, per component and in total, and under each component the objects to update (with
// the fields that change), to prune and to remove; with verbose the objects to create too.
func Summary(w io.Writer, s *event.Summary, verbose bool) {
	io.WriteString(w, strings.Join(summaryLines(&s.Changes, s, verbose), "\n")+"\n")
}

// Counts prints the summary's counts alone: the totals and a line per component.
func Counts(w io.Writer, s *event.Summary) {
	io.WriteString(w, strings.Join(summaryLines(&s.Changes, nil, false), "\n")+"\n")
}

// NothingToChange says a run would write nothing, instead of asking.
func NothingToChange(w io.Writer, s *event.Summary, revision string) {
	fmt.Fprintf(w, "%s Nothing to change: the %d objects of revision %q are as the spec renders them.\n", green("✔"), s.Unchanged, revision)
}

// summaryLines are the summary's lines: the totals, then one line per component (and, with
// s, its objects). The plan event's counts print without s.
func summaryLines(c *event.Changes, s *event.Summary, verbose bool) []string {
	lines := []string{"Plan: " + countWords(c.Counts, true)}
	width := 0
	for _, comp := range c.Components {
		width = max(width, len([]rune(title(comp))))
	}
	for _, comp := range c.Components {
		t := title(comp)
		lines = append(lines, fmt.Sprintf("  %s%s  %s", t, strings.Repeat(" ", width-len([]rune(t))), countWords(comp.Counts, false)))
		if s == nil {
			continue
		}
		for _, ch := range s.Objects[comp.Component] {
			switch ch.Action {
			case event.ActionCreated:
				if verbose {
					lines = append(lines, "    "+green("+")+" "+ch.Object)
				}
			case event.ActionConfigured, event.ActionDeactivated:
				line := "    " + yellow("~") + " " + ch.Object
				switch {
				case len(ch.Fields) > 0:
					line += ": " + strings.Join(ch.Fields, ", ")
				case ch.Action == event.ActionDeactivated:
					line += " (deactivated)"
				}
				lines = append(lines, line)
			case event.ActionPruned, event.ActionRemoved:
				lines = append(lines, "    "+red("-")+" "+ch.Object)
			}
		}
	}
	if s != nil && s.DefaultTag != nil {
		switch t := s.DefaultTag; {
		case t.From == "":
			lines = append(lines, fmt.Sprintf("  Default revision tag: to create, pointing at revision %q", t.Revision))
		case t.From != t.Revision:
			lines = append(lines, fmt.Sprintf("  Default revision tag: to move from revision %q to %q", t.From, t.Revision))
		}
	}
	return lines
}

func title(c event.ComponentChanges) string {
	if c.Title != "" {
		return c.Title
	}
	return c.Component
}

// countWords words counts: "5 to create, 4 to update, 33 unchanged, 0 to prune" for the
// totals (every count), only the counts that are not zero for a component. A removal
// counts only what it removes.
func countWords(c event.Counts, total bool) string {
	if c.Remove > 0 && c.Create+c.Update+c.Unchanged+c.Prune == 0 {
		return fmt.Sprintf("%d to remove", c.Remove)
	}
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{c.Create, "to create"}, {c.Update, "to update"}, {c.Unchanged, "unchanged"}, {c.Prune, "to prune"}} {
		if total || p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// RevisionUpgradePlan is what upgrade --strategy revision will do, before it asks: the
// move, then each write into the user's objects.
func RevisionUpgradePlan(w io.Writer, from, to string, workloads, batches int, writes []string) {
	fmt.Fprintf(w, "Revision %s -> %s: %d workloads in %d batches\n", from, to, workloads, batches)
	for _, l := range writes {
		fmt.Fprintf(w, "    %s\n", l)
	}
}
