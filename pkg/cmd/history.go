package cmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/printer"
)

// HistoryAction lists the install records in the istio namespace.
type HistoryAction struct {
	// Revision limits the listing to one revision ("default" for the default one).
	Revision    string
	Output      string
	Globals     *Globals
	Out, ErrOut io.Writer
}

func newHistoryCommand(g *Globals) *cobra.Command {
	a := &HistoryAction{Globals: g}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List the install records: each install, upgrade and rollback of each revision, with its outcome",
		Long: `Lists the install records kept in the istio namespace (-i): one per install, upgrade or rollback
of a revision, numbered per revision, with the time, the outcome, the profile and the istioctl
version. -o json prints the whole records, the resolved spec and the objects' identities included.
'istioctl rollback N' re-installs record N. A record whose digest, kept on the istio Namespace
when istioctl wrote it, is missing or differs is marked UNTRUSTED: rollback and install --atomic
refuse it (` + spec.DocsURL + `history.md#sealed-records).`,
		Example: `  # every revision's records
  istioctl history

  # one revision, as JSON
  istioctl history -r canary -o json

  # the records' numbers and outcomes, as kubectl prints columns
  istioctl history -o custom-columns=RECORD:.number,STATUS:.outcome`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.Out, a.ErrOut = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return a.Run(cmd.Context())
		},
	}
	cmd.Flags().StringVarP(&a.Revision, "revision", "r", "", "Only this revision's records (\"default\" for the default revision)")
	outputFlag(cmd.Flags(), &a.Output, printer.ListFormats, "Output format", "")
	return cmd
}

// Run prints the records.
func (a *HistoryAction) Run(ctx context.Context) error {
	h := &action.History{Config: a.Globals.Config(a.ErrOut), Revision: a.Revision}
	records, err := h.Run(ctx)
	if err != nil {
		return err
	}
	if len(records) == 0 && a.Output == "table" {
		what := "any revision"
		if a.Revision != "" {
			what = "revision " + a.Revision
		}
		fmt.Fprintf(a.ErrOut, "No install records of %s in namespace %s.\n", what, h.Namespace())
		return nil
	}
	return printer.History(a.Out, records, printer.Format(a.Output))
}
