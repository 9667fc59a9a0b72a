package check

import (
	"context"
	"strings"
)

// The pre-write gates (GateRelied, GateHop, GateAdmission, GateOwnership) are selections of
// the registry that install, upgrade and the revision upgrade run the same way (Gate) before
// they write: an error blocks the run unless the gate's override lifts it, which makes it a
// warning.

// SectionOwnership is the ownership gate's section.
const SectionOwnership = "Ownership"

// Override is a set of a run's options that lift gates: each gate names the one that lifts
// it (gates), so no option lifts a gate it does not name.
type Override uint

// The overrides.
const (
	// Force lifts the gates of what the cluster runs: spec validation and pre-write errors
	// become warnings.
	Force Override = 1 << iota
	// TakeOwnership lifts the ownership gate: the run adopts other managers' objects.
	// Force never does.
	TakeOwnership
)

// overrides are the overrides' flags and what lifting a gate with each does.
var overrides = map[Override]struct{ flag, does string }{
	Force:         {"--force", "install anyway"},
	TakeOwnership: {"--take-ownership", "adopt them"},
}

// Flag is the option's flag.
func (o Override) Flag() string { return overrides[o].flag }

// Does says what lifting a gate with the option does.
func (o Override) Does() string { return overrides[o].does }

// gates are each gate's headline (what it found when it blocks a run) and its override.
var gates = map[Selection]struct {
	headline string
	lift     Override
}{
	GateRelied:    {"this install relies on pieces that are not as it needs them", Force},
	GateHop:       {"the upgrade's hop breaks the skew rules", Force},
	GateAdmission: {"the cluster would refuse, or not run, what this install creates", Force},
	GateOwnership: {"objects this install would apply exist and were not installed by istioctl", TakeOwnership},
}

// Hop is one control plane's move, judged by the hop gate: Object is its istiod (or the
// cluster), From the version it runs; InPlace says the same revision moves.
type Hop struct {
	Object, From string
	InPlace      bool
}

// Gate runs gate's checks. Errors block (a *Blocked) unless set holds the gate's override;
// what does not block is returned for the run to report.
func Gate(ctx context.Context, gate Selection, env *Env, set Override) (kept []Result, err error) {
	rep := Run(ctx, "install", Select(gate), env)
	lifted := set&LiftedBy(gate) != 0
	var blocking []Result
	for _, r := range rep.Results {
		if !r.Passed && r.Severity == Error && !lifted {
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

// LiftedBy is the override that lifts gate.
func LiftedBy(gate Selection) Override { return gates[gate].lift }

// Blocked is a gate that stopped a run before it wrote anything: the errors it found. The
// printer words it for the user (pkg/printer.Blocked); Error is its plain form.
type Blocked struct {
	Gate    Selection
	Results []Result
}

// Headline says what the gate found.
func (b *Blocked) Headline() string { return gates[b.Gate].headline }

// LiftedBy is the override that would have let the run go on.
func (b *Blocked) LiftedBy() Override { return LiftedBy(b.Gate) }

func (b *Blocked) Error() string {
	lines := make([]string, len(b.Results))
	for i, r := range b.Results {
		lines[i] = r.Object + ": " + r.Message
	}
	lift := b.LiftedBy()
	return b.Headline() + ":\n  " + strings.Join(lines, "\n  ") + "\nNothing was written. Fix them, or " + lift.Does() + " with " + lift.Flag()
}

// foreignObjects is the ownership gate's check: every object the run would apply that
// exists without istioctl's ownership (Env.Foreign), with its manager.
func foreignObjects(_ context.Context, env *Env) []Result {
	out := make([]Result, len(env.Foreign))
	for i, f := range env.Foreign {
		out[i] = Result{Object: f.Object, Message: "managed by " + f.Manager}
	}
	return out
}
