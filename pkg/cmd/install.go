package cmd

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/istioctl-installer/istioctl/operator/action"
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
	lockFlags
}

func (f *applyFlags) add(fs *pflag.FlagSet) {
	fs.BoolVarP(&f.SkipConfirmation, "skip-confirmation", "y", false, "Do not ask for confirmation (required when standard input is not a terminal)")
	fs.BoolVar(&f.DryRun, "dry-run", false, "Server-side dry run: the cluster validates everything, nothing is written")
	fs.DurationVar(&f.Timeout, "readiness-timeout", 5*time.Minute, "How long the whole install may wait for its components to become ready")
	fs.StringVarP(&f.Output, "output", "o", "text", "Progress output: text or json (one event per line)")
	fs.IntVar(&f.HistoryMax, "history-max", action.DefaultHistoryMax, "How many install records of the revision to keep in the cluster (0: no limit)")
	fs.BoolVar(&f.TakeOwnership, "take-ownership", false, "Adopt objects the install renders that exist without istioctl's ownership (e.g. a Helm release's); without it the run stops before writing anything")
	f.lockFlags.add(fs)
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
	Globals            *Globals
	In                 io.Reader
	Out, ErrOut        io.Writer
	// IsTerminal reports whether In is a terminal (prompts need one).
	IsTerminal func() bool
	// Command names the run to other writers ("istioctl upgrade").
	Command string
}

func newInstallCommand(g *Globals, use string) *cobra.Command {
	a := &InstallCommand{Globals: g, Command: "istioctl " + use}
	cmd := &cobra.Command{
		Use:   use,
		Short: "Install or upgrade Istio: apply the spec's components in order, wait until healthy, prune what is no longer rendered",
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

  # take over an Istio installed with Helm, then retire its Helm releases (docs/migrate.md)
  istioctl install --set profile=minimal --take-ownership --retire-helm-releases -y`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.In, a.Out, a.ErrOut = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			return a.Run(cmd.Context())
		},
	}
	a.Spec.add(cmd.Flags())
	cmd.Flags().StringVarP(&a.Revision, "revision", "r", "", "Control plane revision (the same as --set revision=R)")
	a.applyFlags.add(cmd.Flags())
	cmd.Flags().BoolVar(&a.Atomic, "atomic", false, "On failure, restore the previous successful install from the install history (or remove the revision's components when there is none)")
	cmd.Flags().BoolVar(&a.RetireHelmReleases, action.RetireHelmReleasesFlag[2:], false,
		"Once the install succeeded, retire the Helm releases whose objects it took over and that it left nothing of their own: delete their release records, keep the objects (with --dry-run: list them)")
	return cmd
}

// Run plans, asks unless -y, and installs; with -y (and for a dry run) the action plans
// itself, under the cluster lock.
func (a *InstallCommand) Run(ctx context.Context) error {
	if err := checkOutput(a.Output, "text", "json"); err != nil {
		return err
	}
	in := &action.Install{
		Config:             a.Globals.writerConfig(a.ErrOut, a.Command, a.lockFlags),
		Spec:               a.Spec.options(a.In, a.Revision),
		DryRun:             a.DryRun,
		ReadinessTimeout:   a.Timeout,
		HistoryMax:         a.HistoryMax,
		TakeOwnership:      a.TakeOwnership,
		RetireHelmReleases: a.RetireHelmReleases,
		Atomic:             a.Atomic,
		Replan:             a.prompts(),
		Events:             eventSink(a.Out, a.Output),
	}
	if !a.prompts() {
		_, err := in.Run(ctx, nil)
		return err
	}
	plan, err := in.Plan(ctx)
	if err == nil {
		err = confirm(a.In, a.Out, a.IsTerminal,
			fmt.Sprintf("This will install the Istio %s profile %q into the cluster. Proceed? (y/N) ", version.Version, plan.Profile))
	}
	if err == nil {
		_, err = in.Run(ctx, plan)
	}
	return err
}
