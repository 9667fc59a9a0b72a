package cmd

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/pkg/printer"
)

// UninstallCommand is uninstall: flags into an action.Uninstall.
type UninstallCommand struct {
	Spec             SpecFlags
	Revision         string
	Purge            bool
	SkipConfirmation bool
	DryRun           bool
	Verbose          bool
	IgnoreNotFound   bool
	Timeout          time.Duration
	RemoteContexts   []string
	Output           string
	lockFlags
	Globals     *Globals
	In          io.Reader
	Out, ErrOut io.Writer
	IsTerminal  func() bool
}

func newUninstallCommand(g *Globals) *cobra.Command {
	a := &UninstallCommand{Globals: g, IsTerminal: g.Streams.IsTerminal}
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove what istioctl installed: one revision's control plane and gateways, or everything with --purge",
		Long: `Removes the objects an install labelled as its own. Without --purge only one revision (the
default one, or -r, or the one in -f) is removed and the CRDs stay; with --purge every revision
and the CRDs go, and with them every Istio resource in the cluster.`,
		Example: `  # remove the canary revision
  istioctl uninstall -r canary -y

  # remove everything, showing what would go first
  istioctl uninstall --purge --dry-run
  istioctl uninstall --purge -y

  # in a script that may run twice: a revision already gone is not an error
  istioctl uninstall -r canary -y --ignore-not-found`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.In, a.Out, a.ErrOut = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			if !a.Purge && a.Revision == "" && len(a.Spec.Files) == 0 && !cmd.Flags().Changed("set") {
				return Usagef("say what to remove: -r REVISION (\"default\" for the default one), -f FILE, --set revision=R, or --purge")
			}
			return a.Run(cmd.Context())
		},
	}
	cmd.Flags().StringSliceVarP(&a.Spec.Files, "filename", "f", nil, "The IstioOperator file of the install to remove")
	setFlag(cmd.Flags(), &a.Spec.Sets, "Override a spec field (e.g. revision=canary)")
	cmd.Flags().StringVarP(&a.Spec.Manifests, "manifests", "d", "", "Directory with profiles/ to resolve -f and --set with instead of the built-in ones")
	cmd.Flags().BoolVar(&a.Spec.Force, "force", false, "Proceed even when -f or --set has validation errors (they are shown as warnings); only what the install owns is ever removed")
	cmd.Flags().StringVarP(&a.Revision, "revision", "r", "", "The revision to remove")
	cmd.Flags().BoolVar(&a.Purge, "purge", false, "Remove every revision and the CRDs (and so every Istio resource)")
	cmd.Flags().BoolVarP(&a.SkipConfirmation, "skip-confirmation", "y", false, "Do not ask for confirmation (required when standard input is not a terminal)")
	cmd.Flags().BoolVar(&a.DryRun, "dry-run", false, "List what would be removed; remove nothing")
	cmd.Flags().BoolVarP(&a.Verbose, "verbose", "v", false, "List every object before removing any (the confirmation always does)")
	cmd.Flags().BoolVar(&a.IgnoreNotFound, "ignore-not-found", false, "Succeed when nothing carries the install's labels (for scripts that may run twice)")
	cmd.Flags().DurationVar(&a.Timeout, "timeout", 5*time.Minute, "How long to wait for the removed objects to be gone")
	cmd.Flags().StringSliceVar(&a.RemoteContexts, "remote-contexts", nil, "Kubeconfig contexts of other clusters of the mesh: the link Secrets there that point at this cluster are removed too")
	outputFlag(cmd.Flags(), &a.Output, printer.EventFormats, "Output", " (json: one event per line)")
	a.lockFlags.add(cmd.Flags())
	return cmd
}

// Run plans the removal, lists it when asked (and always before a prompt), asks unless -y,
// and removes; with -y (and for a dry run) the action plans itself, under the cluster lock,
// and its plan event says what it removes.
func (a *UninstallCommand) Run(ctx context.Context) error {
	prompt := !a.DryRun && !a.SkipConfirmation
	// Before a prompt, or with -v, every object is listed before anything is removed.
	shows := prompt || (a.Verbose && printer.Format(a.Output) == printer.Text)
	u := &action.Uninstall{
		Config:         a.Globals.writerConfig(a.ErrOut, "istioctl uninstall", a.lockFlags),
		Spec:           a.Spec.options(a.In, a.Revision),
		Purge:          a.Purge,
		DryRun:         a.DryRun,
		IgnoreNotFound: a.IgnoreNotFound,
		Timeout:        a.Timeout,
		RemoteContexts: a.RemoteContexts,
		Replan:         prompt,
		Events:         eventSink(a.Out, a.Output, a.Verbose, shows),
	}
	if !shows {
		plan, err := u.Run(ctx, nil)
		if plan != nil && plan.Nothing != "" {
			a.nothing(plan)
		}
		return err
	}
	plan, err := u.Plan(ctx)
	if err == nil && plan.Nothing == "" && prompt {
		err = needTerminal(a.In, a.IsTerminal)
	}
	if plan != nil {
		if plan.Nothing != "" {
			a.nothing(plan)
		} else {
			if printer.Format(a.Output) == printer.Text {
				printer.Leaving(a.ErrOut, plan.Leave)
			}
			printer.Summary(a.Out, plan.Summary(), true)
		}
	}
	if err != nil || plan.Nothing != "" {
		return err
	}
	if prompt {
		what := fmt.Sprintf("revision %q", plan.Revision)
		if a.Purge {
			what = "every revision and the Istio CRDs (and with them every Istio resource)"
		}
		if err := confirm(a.In, a.Out, a.IsTerminal, fmt.Sprintf("This will remove %s: the %d objects above. Proceed? (y/N) ", what, len(plan.Targets))); err != nil {
			return err
		}
	}
	_, err = u.Run(ctx, plan)
	return err
}

// nothing says the uninstall found nothing to remove.
func (a *UninstallCommand) nothing(plan *action.UninstallPlan) {
	if printer.Format(a.Output) == printer.Text {
		printer.Leaving(a.ErrOut, plan.Leave)
	}
	printer.Line(a.ErrOut, plan.Nothing)
}
