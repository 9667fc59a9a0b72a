package cmd

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/action/fleetrun"
	"github.com/istioctl-installer/istioctl/pkg/printer"
)

// FleetCheckCommand is x fleet precheck or x fleet verify: flags into an fleetrun.Fleet.
type FleetCheckCommand struct {
	// Command is precheck or verify.
	Command              string
	File, Output, FailOn string
	// Verbose prints every passing check of a precheck (a line per section otherwise).
	Verbose     bool
	Globals     *Globals
	In          io.Reader
	Out, ErrOut io.Writer
}

func newFleetCheckCommand(g *Globals, use string) *cobra.Command {
	a := &FleetCheckCommand{Command: use, Globals: g}
	short, long := "Check, before installing a fleet, that each of its clusters and you can take it",
		`Runs x precheck in every cluster of the fleet file at once, each against the IstioOperator
that cluster gets (fleet dump), then the checks across clusters (names, one mesh ID, the
primaries) and that each link Secret the fleet will make is free or its own already. One
report: a section per cluster, one across clusters, one for the links. A cluster that cannot
be reached fails its section; the others are checked all the same. Writes nothing.`
	if use == "verify" {
		short, long = "Check that every cluster of a fleet is installed as the fleet file says and linked",
			`Runs verify-install in every cluster of the fleet file at once, each against the IstioOperator
that cluster gets, with every link check of remote-clusters (the specs name the clusters),
then the checks across clusters and that each link Secret the fleet makes is there. Exits 1
when any check fails.`
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Example: `  istioctl x fleet ` + use + ` -f fleet.yaml
  istioctl x fleet ` + use + ` -f fleet.yaml -o junit > fleet-` + use + `.xml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.In, a.Out, a.ErrOut = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			return a.Run(cmd.Context())
		},
	}
	cmd.Flags().StringVarP(&a.File, "filename", "f", "", fleetFileUsage)
	outputFlag(cmd.Flags(), &a.Output, printer.ReportFormats, "Output", "")
	cmd.Flags().StringVar(&a.FailOn, "fail-on", "error", "Exit non-zero on results of this severity or worse: error or warning")
	if use == "precheck" {
		cmd.Flags().BoolVarP(&a.Verbose, "verbose", "v", false, "Print every passing check, not a line per section that passed")
	}
	return cmd
}

// Run runs the checks and prints the report; the error says whether it failed.
func (a *FleetCheckCommand) Run(ctx context.Context) error {
	if a.File == "" {
		return Usagef("-f is required: the fleet file")
	}
	if a.FailOn != action.FailOnError && a.FailOn != action.FailOnWarning {
		return Usagef("--fail-on %q: use error or warning", a.FailOn)
	}
	f := &fleetrun.Fleet{Config: a.Globals.Config(a.ErrOut), File: a.File, Stdin: a.In, FailOn: a.FailOn}
	run := f.Precheck
	if a.Command == "verify" {
		run = f.Verify
	}
	res, err := run(ctx)
	if err != nil {
		return err
	}
	short := printer.ReportOptions{Short: a.Command == "precheck" && !a.Verbose}
	if err := printer.Report(a.Out, res.Report, printer.Format(a.Output), short); err != nil {
		return err
	}
	printer.Verdict(a.Out, a.ErrOut, res.Report, res.Failed, printer.Format(a.Output))
	if res.Failed {
		return &ExitError{Code: 1}
	}
	return nil
}
