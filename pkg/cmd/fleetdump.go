package cmd

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action/fleetrun"
	"github.com/istioctl-installer/istioctl/pkg/printer"
)

// FleetDumpCommand is x fleet dump: flags into an fleetrun.Fleet.
type FleetDumpCommand struct {
	File, Output string
	Globals      *Globals
	In           io.Reader
	Out, ErrOut  io.Writer
}

func newFleetDumpCommand(g *Globals) *cobra.Command {
	a := &FleetDumpCommand{Globals: g}
	cmd := &cobra.Command{
		Use:   "dump",
		Short: "Print the IstioOperator each cluster of a fleet gets and the links between them, touching no cluster",
		Long: `Prints, for each cluster of the fleet file, the IstioOperator it gets (as profile dump prints
one: the shared spec, the cluster's overlay and the multi-cluster values the fleet sets), the
labels of its istio namespace and its cacerts Secret (the files, never their content), then
every link: which remote Secret goes into which cluster, with its labels, and the
create-remote-secret command that makes it by hand. Reads the kubeconfig, when there is
one, to check the contexts exist (a context it cannot check is a warning); contacts no
cluster and needs no credentials.`,
		Example: `  istioctl x fleet dump -f fleet.yaml
  istioctl x fleet dump -f fleet.yaml -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.In, a.Out, a.ErrOut = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			return a.Run(cmd.Context())
		},
	}
	cmd.Flags().StringVarP(&a.File, "filename", "f", "", fleetFileUsage)
	outputFlag(cmd.Flags(), &a.Output, printer.DumpFormats, "Output", "")
	return cmd
}

// Run dumps the fleet.
func (a *FleetDumpCommand) Run(ctx context.Context) error {
	if a.File == "" {
		return Usagef("-f is required: the fleet file")
	}
	d, err := (&fleetrun.Fleet{Config: a.Globals.Config(a.ErrOut), File: a.File, Stdin: a.In}).Dump(ctx)
	if err != nil {
		return err
	}
	return printer.FleetDump(a.Out, d, printer.Format(a.Output))
}
