package cmd

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action/fleetrun"
	"github.com/istioctl-installer/istioctl/pkg/printer"
)

// FleetWriteCommand is x fleet install or x fleet uninstall: flags into an
// fleetrun.Install or fleetrun.Uninstall.
type FleetWriteCommand struct {
	// Command is install or uninstall.
	Command          string
	File, Output     string
	SkipConfirmation bool
	Verbose          bool
	// Timeout is install's --readiness-timeout, uninstall's --timeout.
	Timeout time.Duration
	Purge   bool
	// Allowed is install's --allowed-registries.
	Allowed []string
	lockFlags
	Globals     *Globals
	In          io.Reader
	Out, ErrOut io.Writer
	IsTerminal  func() bool
}

func newFleetWriteCommand(g *Globals, use string) *cobra.Command {
	a := &FleetWriteCommand{Command: use, Globals: g, IsTerminal: g.Streams.IsTerminal}
	cmd := &cobra.Command{
		Use:   use,
		Short: "Install every cluster of a fleet file and link them, in the order the mesh needs",
		Long: `Installs each cluster of the fleet file with the IstioOperator fleet dump prints for it, by
the same steps as istioctl install and under that cluster's lock, and makes the links fleet
dump lists: each cluster's cacerts Secret first (when the file gives one), then the primaries
at once, each remote once its primary stands, each link once both its clusters stand. Links
of this fleet the file no longer implies are removed (with the tokens issued for them), also
in a cluster the file dropped, whose control plane stays. A second run writes nothing: a link
is kept while its token still authenticates. A cluster that fails or cannot be reached stops
only what needs it; the run exits 1 naming it and each link left out, and the same command
run again continues.`,
		Example: `  istioctl x fleet install -f fleet.yaml
  istioctl x fleet install -f fleet.yaml -y -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.In, a.Out, a.ErrOut = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			return a.Run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	if use == "uninstall" {
		cmd.Short = "Remove a fleet: its links first, then its clusters in the reverse of the install's order"
		cmd.Long = `Removes every link Secret of the fleet (with the tokens issued for them), in the clusters of the
file and in those it dropped, then uninstalls each cluster's install as uninstall -f with its
dumped IstioOperator does: the remotes first, each control plane once the clusters it serves
are removed. With --purge every revision and the CRDs go, and the cacerts Secrets the fleet
wrote. A cluster that fails or cannot be reached stops only what it serves.`
		cmd.Example = `  istioctl x fleet uninstall -f fleet.yaml
  istioctl x fleet uninstall -f fleet.yaml --purge -y`
		fs.DurationVar(&a.Timeout, "timeout", 5*time.Minute, "How long each cluster waits for the removed objects to be gone")
		fs.BoolVar(&a.Purge, "purge", false, "Remove every revision and the CRDs in each cluster, and the fleet's cacerts Secrets")
	} else {
		fs.DurationVar(&a.Timeout, "readiness-timeout", 5*time.Minute, "How long each cluster's install may wait for its components to become ready")
		addAllowedRegistries(cmd, &a.Allowed)
	}
	fs.StringVarP(&a.File, "filename", "f", "", fleetFileUsage)
	fs.BoolVarP(&a.SkipConfirmation, "skip-confirmation", "y", false, "Do not ask for confirmation (required when standard input is not a terminal)")
	outputFlag(fs, &a.Output, printer.EventFormats, "Progress output", " (text: lines prefixed with the cluster; json: one event per line, each with its cluster)")
	fs.BoolVarP(&a.Verbose, "verbose", "v", false, "Print every object's line (applied, pruned, waited on, ready) and the counts per component")
	a.lockFlags.add(fs)
	return cmd
}

// fleetRun is what the command needs of either action.
type fleetRun interface {
	Plan(context.Context) (*fleetrun.Plan, error)
	Run(context.Context, *fleetrun.Plan) (*fleetrun.Result, error)
}

// Run plans every cluster, shows the plan and asks unless -y, then runs.
func (a *FleetWriteCommand) Run(ctx context.Context) error {
	if a.File == "" {
		return Usagef("-f is required: the fleet file")
	}
	prompt := !a.SkipConfirmation
	if prompt {
		if err := needTerminal(a.In, a.IsTerminal); err != nil {
			return err
		}
	}
	fleet := &fleetrun.Fleet{Config: a.Globals.writerConfig(a.ErrOut, "istioctl x fleet "+a.Command, a.lockFlags), File: a.File, Stdin: a.In}
	fleet.AllowedRegistries = a.Allowed
	sink := printer.NewFleetEvents(a.Out, printer.Format(a.Output), isTerminalFile(a.Out), printer.TerminalOptions{Verbose: a.Verbose})
	var run fleetRun = &fleetrun.Install{Fleet: fleet, ReadinessTimeout: a.Timeout, Replan: prompt, Events: sink}
	if a.Command == "uninstall" {
		run = &fleetrun.Uninstall{Fleet: fleet, Purge: a.Purge, Timeout: a.Timeout, Replan: prompt, Events: sink}
	}
	plan, err := run.Plan(ctx)
	if err != nil {
		return err
	}
	if prompt {
		a.show(ctx, plan)
		question := fmt.Sprintf("This will install fleet %q into %d clusters as above. Proceed? (y/N) ", plan.Fleet, len(plan.Members))
		if a.Command == "uninstall" {
			question = fmt.Sprintf("This will remove fleet %q from %d clusters as above. Proceed? (y/N) ", plan.Fleet, len(plan.Members))
		}
		if err := confirm(a.In, a.Out, a.IsTerminal, question); err != nil {
			return err
		}
	}
	res, err := run.Run(ctx, plan)
	if err != nil {
		return err
	}
	return res.Err()
}

// show prints each cluster's plan and the links, before the question.
func (a *FleetWriteCommand) show(ctx context.Context, plan *fleetrun.Plan) {
	var clusters []printer.FleetPlanCluster
	for _, m := range plan.Members {
		c := printer.FleetPlanCluster{Name: m.Name, Role: m.Role, Notes: m.Notes}
		var err error
		switch {
		case m.Err != nil:
			err = m.Err
		case m.Install != nil:
			c.Summary, err = m.Install.Summary(ctx, true)
		case m.Uninstall != nil:
			c.Summary = m.Uninstall.Summary()
			c.Nothing = m.Uninstall.Nothing
		}
		if err != nil {
			c.Error = err.Error()
		}
		clusters = append(clusters, c)
	}
	var links []printer.FleetPlanLink
	for _, l := range plan.Links {
		links = append(links, printer.FleetPlanLink{Into: l.Into, From: l.From, Secret: l.Secret, Action: l.Action})
	}
	var kept []printer.FleetPlanKept
	for _, k := range plan.Kept {
		kept = append(kept, printer.FleetPlanKept{Cluster: k.Cluster, Object: k.Object, Message: k.Message, Reason: k.Reason})
	}
	printer.FleetPlan(a.Out, clusters, links, kept...)
}
