package check

import (
	"context"
	"strings"
)

// The pre-write gates (GateRelied, GateHop, GateAdmission) are selections of the registry
// that install, upgrade and the revision upgrade run the same way (Gate) before they write:
// an error blocks the run unless it is forced, which makes it a warning.

// gateHeadlines say what each gate found when it blocks a run.
var gateHeadlines = map[Selection]string{
	GateRelied:    "this install relies on pieces that are not as it needs them",
	GateHop:       "the upgrade's hop breaks the skew rules",
	GateAdmission: "the cluster would refuse, or not run, what this install creates",
}

// Hop is one control plane's move, judged by the hop gate: Object is its istiod (or the
// cluster), From the version it runs; InPlace says the same revision moves.
type Hop struct {
	Object, From string
	InPlace      bool
}

// Gate runs gate's checks. Errors block (a *Blocked) unless force; what does not block is
// returned for the run to report.
func Gate(ctx context.Context, gate Selection, env *Env, force bool) (kept []Result, err error) {
	rep := Run(ctx, "install", Select(gate), env)
	var blocking []Result
	for _, r := range rep.Results {
		if !r.Passed && r.Severity == Error && !force {
			blocking = append(blocking, r)
			continue
		}
		kept = append(kept, r)
	}
	if len(blocking) > 0 {
		return kept, &Blocked{Gate: gate, Results: blocking}
	}
	return kept, nil
}

// Blocked is a gate that stopped a run before it wrote anything: the errors it found. The
// printer words it for the user (pkg/printer.Blocked); Error is its plain form.
type Blocked struct {
	Gate    Selection
	Results []Result
}

// Headline says what the gate found.
func (b *Blocked) Headline() string { return gateHeadlines[b.Gate] }

func (b *Blocked) Error() string {
	lines := make([]string, len(b.Results))
	for i, r := range b.Results {
		lines[i] = r.Object + ": " + r.Message
	}
	return b.Headline() + ":\n  " + strings.Join(lines, "\n  ") + "\nNothing was written"
}
