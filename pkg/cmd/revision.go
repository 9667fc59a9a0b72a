package cmd

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/pkg/printer"
)

// RevisionListCommand is x revision list.
type RevisionListCommand struct {
	Output  string
	Globals *Globals
	Out     io.Writer
}

func newRevisionCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "revision",
		Short: "What runs, by control plane revision",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	a := &RevisionListCommand{Globals: g}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the revisions: version, components, tags, the namespaces that select each, and the pods whose proxies it injected (proxies out of skew marked)",
		Example: `  istioctl x revision list
  istioctl x revision list -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.Out = cmd.OutOrStdout()
			return a.Run(cmd.Context())
		},
	}
	outputFlag(list.Flags(), &a.Output, printer.DocumentFormats, "Output", "")
	cmd.AddCommand(list)
	return cmd
}

// Run lists the revisions.
func (a *RevisionListCommand) Run(ctx context.Context) error {
	revs, err := (&action.RevisionList{Config: a.Globals.Config(io.Discard)}).Run(ctx)
	if err != nil {
		return err
	}
	return printer.Revisions(a.Out, revs, printer.Format(a.Output))
}
