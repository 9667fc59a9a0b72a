package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/pkg/printer"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// InstallAction resolves, renders and applies a spec.
type InstallAction struct {
	applyFlags
	Spec     SpecFlags
	Revision string
	// Atomic restores the previous successful install when this one fails.
	Atomic      bool
	Globals     *Globals
	In          io.Reader
	Out, ErrOut io.Writer
	// IsTerminal reports whether In is a terminal (prompts need one).
	IsTerminal func() bool
}

func newInstallCommand(g *Globals, use string) *cobra.Command {
	a := &InstallAction{Globals: g}
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
  istioctl upgrade -f my-spec.yaml -y --atomic`,
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
	return cmd
}

// Run installs.
func (a *InstallAction) Run(ctx context.Context) (err error) {
	defer func() {
		// Stopped before the engine's safe points could report (while resolving, rendering
		// or connecting): nothing was applied.
		var interrupted *install.InterruptedError
		if ctx.Err() != nil && err != nil && !errors.As(err, &interrupted) {
			err = fmt.Errorf("interrupted before any component was applied: %w; run the same install again", context.Canceled)
		}
	}()
	if err := checkOutput(a.Output, "text", "json"); err != nil {
		return err
	}
	res, manifests, err := a.Spec.render(a.In, a.ErrOut, a.Revision, false)
	if err != nil {
		return err
	}
	client, err := a.Globals.Client()
	if err != nil {
		return err
	}
	if _, err := client.ServerVersion(ctx); err != nil {
		return err
	}
	events := eventSink(a.Out, a.Output)
	if err := a.checkRelied(ctx, client, res, manifests, events); err != nil {
		return err
	}
	if !a.DryRun && !a.SkipConfirmation {
		if err := a.confirm(res.Profile); err != nil {
			return err
		}
	}
	ap := &applier{flags: a.applyFlags, client: client, events: events, errOut: a.ErrOut}
	return ap.install(ctx, res, manifests, a.Atomic)
}

func (a *InstallAction) confirm(profile string) error {
	return confirm(a.In, a.Out, a.IsTerminal,
		fmt.Sprintf("This will install the Istio %s profile %q into the cluster. Proceed? (y/N) ", version.Version, profile))
}

// isTerminal says whether w is a terminal.
func isTerminalFile(w any) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// eventSink prints a run's events in format to out: with a progress bar when out is a
// terminal, plain lines otherwise.
func eventSink(out io.Writer, format string) event.Sink {
	if isTerminalFile(out) {
		return printer.NewTerminalEvents(out, printer.Format(format))
	}
	return printer.NewEvents(out, printer.Format(format))
}

// confirm asks question on a terminal; without one it is a usage error asking for -y.
func confirm(in io.Reader, out io.Writer, isTerminal func() bool, question string) error {
	if isTerminal == nil {
		isTerminal = func() bool { return isTerminalFile(in) }
	}
	if !isTerminal() {
		return Usagef("standard input is not a terminal, so istioctl cannot ask for confirmation: pass -y (--skip-confirmation)")
	}
	fmt.Fprint(out, question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	if answer := strings.ToLower(strings.TrimSpace(line)); answer != "y" && answer != "yes" {
		fmt.Fprintln(out, "Cancelled.")
		return &ExitError{Code: 1}
	}
	return nil
}
