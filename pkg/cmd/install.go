package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/printer"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// applyFlags are the flags of the commands that apply a spec: install, upgrade, rollback.
type applyFlags struct {
	SkipConfirmation bool
	DryRun           bool
	Timeout          time.Duration
	Output           string
	// HistoryMax is how many install records of the revision to keep (0: all).
	HistoryMax int
	// TakeOwnership adopts rendered objects that exist without istioctl's ownership.
	TakeOwnership bool
	// Verbose prints every object's line on a terminal too, and the fields each update
	// changes before the run.
	Verbose bool
	lockFlags
}

func (f *applyFlags) add(fs *pflag.FlagSet) {
	fs.BoolVarP(&f.SkipConfirmation, "skip-confirmation", "y", false, "Do not ask for confirmation (required when standard input is not a terminal)")
	fs.BoolVar(&f.DryRun, "dry-run", false, "Server-side dry run: the cluster validates everything, nothing is written")
	fs.DurationVar(&f.Timeout, "readiness-timeout", 5*time.Minute, "How long the whole install may wait for its components to become ready")
	outputFlag(fs, &f.Output, printer.EventFormats, "Progress output", " (json: one event per line)")
	fs.IntVar(&f.HistoryMax, "history-max", action.DefaultHistoryMax, "How many install records of the revision to keep in the cluster (0: no limit)")
	fs.BoolVar(&f.TakeOwnership, "take-ownership", false, "Adopt objects the install renders that exist without istioctl's ownership (e.g. a Helm release's); without it the run stops before writing anything")
	fs.BoolVarP(&f.Verbose, "verbose", "v", false, "Print every object's line (applied, pruned, waited on, ready) and the counts per component, and before the run the fields each update changes (a server-side dry run of those objects)")
	f.lockFlags.add(fs)
}

// summarizes says whether a summary is printed before the run: when it asks, or with -v
// on text output (with -y alone the counts come with the plan event, no extra request).
func (f *applyFlags) summarizes() bool {
	return f.prompts() || (!f.DryRun && f.Verbose && printer.Format(f.Output) == printer.Text)
}

// summarize prints what the run will do before it starts or asks: with the fields each
// update changes. It returns false when there is nothing to change and nothing to ask: the
// command is done.
func (f *applyFlags) summarize(ctx context.Context, out io.Writer, plan *action.InstallPlan) (bool, error) {
	if !f.summarizes() {
		return true, nil
	}
	s, err := plan.Summary(ctx, true)
	if err != nil {
		return false, err
	}
	if f.prompts() && !s.Writes() {
		printer.NothingToChange(out, s, plan.Revision)
		return false, nil
	}
	printer.Summary(out, s, f.Verbose)
	return true, nil
}

// prompts says whether the run asks before writing.
func (f *applyFlags) prompts() bool { return !f.DryRun && !f.SkipConfirmation }

// InstallCommand is install (and upgrade): flags into an action.Install.
type InstallCommand struct {
	applyFlags
	Spec     SpecFlags
	Revision string
	// Atomic restores the previous successful install when this one fails.
	Atomic bool
	// RetireHelmReleases retires the Helm releases the install took over, once it succeeded.
	RetireHelmReleases bool
	// SkipAdmissionCheck leaves out the plan's admission dry runs.
	SkipAdmissionCheck bool
	// PinDigests is --pin-digests.
	PinDigests bool
	// Allowed is --allowed-registries.
	Allowed []string
	// Verify runs verify-install's checks once the install succeeded.
	Verify bool
	// NodeBatch is upgrade's --node-batch (install: 1).
	NodeBatch   int
	Globals     *Globals
	In          io.Reader
	Out, ErrOut io.Writer
	// IsTerminal reports whether In is a terminal (prompts need one).
	IsTerminal func() bool
	// Command names the run to other writers ("istioctl upgrade").
	Command string
	// stdin is the spec read from standard input, for --verify's second reading.
	stdin []byte
}

func newInstallCommand(g *Globals, use string) *cobra.Command {
	cmd, _ := installCommand(g, use)
	return cmd
}

// aliases are upstream's other names of a command that installs.
var aliases = map[string][]string{"install": {"apply"}}

// installCommand is install's (or upgrade's) command and the options its flags fill.
func installCommand(g *Globals, use string) (*cobra.Command, *InstallCommand) {
	a := &InstallCommand{Globals: g, Command: "istioctl " + use, IsTerminal: g.Streams.IsTerminal}
	cmd := &cobra.Command{
		Use:     use,
		Aliases: aliases[use],
		Short:   "Install Istio: apply the spec's components in order, wait until healthy, prune what is no longer rendered",
		Example: `  # the default profile, without a prompt
  istioctl install -y

  # the demo profile with an override, as a canary revision
  istioctl install --set profile=demo --set values.pilot.traceSampling=10 -r canary -y

  # what would change, without writing anything (server-side dry run)
  istioctl install -f my-spec.yaml --dry-run

  # machine-readable progress for CI
  istioctl install -f my-spec.yaml -y -o json

  # on failure, put back what was installed before
  istioctl upgrade -f my-spec.yaml -y --atomic

  # take over an Istio installed with Helm, then retire its Helm releases (` + spec.DocsURL + `migrate.md)
  istioctl install --set profile=minimal --take-ownership --retire-helm-releases -y`,
		Args: cobra.NoArgs,
		RunE: runWith(&a.In, &a.Out, &a.ErrOut, a.Run),
	}
	a.Spec.addWithRevision(cmd.Flags(), &a.Revision)
	a.applyFlags.add(cmd.Flags())
	addAllowedRegistries(cmd, &a.Allowed)
	cmd.Flags().BoolVar(&a.PinDigests, "pin-digests", false,
		"Resolve each image (the injected proxy's too) to its digest at the registry it is pulled from and apply name:tag@digest; the install record keeps the digests, so a re-run pins the same ones")
	cmd.Flags().BoolVar(&a.Atomic, "atomic", false, "On failure, restore the previous successful install from the install history (or remove the revision's components when there is none); with --take-ownership, what existed before the run is given back as it was and never removed")
	cmd.Flags().BoolVar(&a.RetireHelmReleases, action.RetireHelmReleasesFlag[2:], false,
		"Once the install succeeded, retire the Helm releases whose objects it took over and that it left nothing of their own: delete their release records, keep the objects (with --dry-run: list them)")
	cmd.Flags().BoolVar(&a.SkipAdmissionCheck, "skip-admission-check", false,
		"Do not prove before writing, by server-side dry runs, that the cluster admits what the install creates (and that the ConfigMaps and Secrets its workloads need exist); a refusal then shows while waiting")
	cmd.Flags().BoolVar(&a.Verify, "verify", false, "Once the install succeeded, run verify-install's checks on it; exit 1 naming any that failed")
	a.NodeBatch = 1
	if use == "upgrade" {
		addUpgradeFlags(cmd, a)
	}
	return cmd, a
}

// Run plans, asks unless -y, and installs; with -y (and for a dry run) the action plans
// itself, under the cluster lock.
func (a *InstallCommand) Run(ctx context.Context) error {
	if err := checkNodeBatch(a.NodeBatch); err != nil {
		return err
	}
	if a.Verify && slices.Contains(a.Spec.Files, "-") {
		// The spec on standard input is read again by the checks.
		b, err := io.ReadAll(a.In)
		if err != nil {
			return fmt.Errorf("reading the spec from standard input: %w", err)
		}
		a.In, a.stdin = bytes.NewReader(b), b
	}
	cfg := a.Globals.writerConfig(a.ErrOut, a.Command, a.lockFlags)
	cfg.AllowedRegistries = a.Allowed
	in := &action.Install{
		Config:             cfg,
		PinDigests:         a.PinDigests,
		Spec:               a.Spec.options(a.In, a.Revision),
		DryRun:             a.DryRun,
		ReadinessTimeout:   a.Timeout,
		HistoryMax:         a.HistoryMax,
		TakeOwnership:      a.TakeOwnership,
		RetireHelmReleases: a.RetireHelmReleases,
		Atomic:             a.Atomic,
		SkipAdmissionCheck: a.SkipAdmissionCheck,
		NodeBatch:          a.NodeBatch,
		Replan:             a.prompts(),
		Events:             eventSink(a.Out, a.Output, a.Verbose, a.summarizes()),
	}
	if !a.summarizes() {
		// The plan is made under the cluster lock; the counts come with its plan event.
		if _, err := in.Run(ctx, nil); err != nil {
			return err
		}
		return a.verify(ctx)
	}
	plan, err := in.Plan(ctx)
	if err != nil {
		return err
	}
	if a.prompts() {
		// Before the summary: without a terminal to ask on, nothing is read for it.
		if err := needTerminal(a.In, a.IsTerminal); err != nil {
			return err
		}
	}
	if goOn, err := a.summarize(ctx, a.Out, plan); err != nil || !goOn {
		return err
	}
	if a.prompts() {
		if err := confirm(a.In, a.Out, a.IsTerminal,
			fmt.Sprintf("This will install the Istio %s profile %q into the cluster. Proceed? (y/N) ", version.Version, plan.Profile)); err != nil {
			return err
		}
	}
	if _, err = in.Run(ctx, plan); err != nil {
		return err
	}
	return a.verify(ctx)
}

// verify is --verify: verify-install's checks on what was installed, printed in the
// install's output format.
func (a *InstallCommand) verify(ctx context.Context) error {
	if !a.Verify || a.DryRun {
		return nil
	}
	v := &CheckCommand{Command: "verify-install", Spec: a.Spec, Revision: a.Revision, Output: a.Output,
		FailOn: action.FailOnError, Globals: a.Globals, In: bytes.NewReader(a.stdin), Out: a.Out, ErrOut: a.ErrOut}
	res, err := v.run(ctx)
	if err != nil || !res.Failed {
		return err
	}
	var failed []string
	for _, r := range res.Report.Results {
		if !r.Passed && string(r.Severity) == action.FailOnError && !slices.Contains(failed, r.Check) {
			failed = append(failed, r.Check)
		}
	}
	return fmt.Errorf("--verify: the install succeeded, but verify-install's checks failed: %s", strings.Join(failed, ", "))
}
