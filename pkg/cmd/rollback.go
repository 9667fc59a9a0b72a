package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/history"
)

// RollbackAction re-installs an install record of a revision.
type RollbackAction struct {
	applyFlags
	// Number is the record to re-install; 0 for the previous successful one.
	Number      int
	Revision    string
	Globals     *Globals
	In          io.Reader
	Out, ErrOut io.Writer
	IsTerminal  func() bool
}

func newRollbackCommand(g *Globals) *cobra.Command {
	a := &RollbackAction{Globals: g}
	cmd := &cobra.Command{
		Use:   "rollback [RECORD]",
		Short: "Re-install an earlier install record of a revision (by default the previous successful one)",
		Long: `Re-installs install record RECORD of the revision (see 'istioctl history'), by default the
previous successful one: its resolved spec is resolved again with this istioctl and installed as
install does, so what newer installs added is pruned. The rollback is recorded as a new record.`,
		Example: `  # back to the previous successful install of the default revision
  istioctl rollback -y

  # record 3 of the canary revision, showing first what would change
  istioctl rollback 3 -r canary --dry-run`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.In, a.Out, a.ErrOut = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			if len(args) == 1 {
				n, err := strconv.Atoi(args[0])
				if err != nil || n < 1 {
					return Usagef("RECORD %q: want a record number (1, 2, ...) from 'istioctl history'", args[0])
				}
				a.Number = n
			}
			return a.Run(cmd.Context())
		},
	}
	cmd.Flags().StringVarP(&a.Revision, "revision", "r", "", "The revision to roll back (default: the default revision)")
	a.applyFlags.add(cmd.Flags())
	return cmd
}

// Run rolls back.
func (a *RollbackAction) Run(ctx context.Context) error {
	if err := checkOutput(a.Output, "text", "json"); err != nil {
		return err
	}
	client, err := a.Globals.Client()
	if err != nil {
		return err
	}
	if _, err := client.ServerVersion(ctx); err != nil {
		return err
	}
	store := &history.Store{Client: client, Namespace: a.Globals.IstioNamespace}
	records, err := store.List(ctx, history.Rev(a.Revision))
	if err != nil {
		return err
	}
	if len(records) == 0 {
		return fmt.Errorf("no install records of revision %s in namespace %s: nothing to roll back to (see 'istioctl history', and -i)", history.Rev(a.Revision), a.Globals.IstioNamespace)
	}
	target, err := history.Target(records, a.Number)
	if err != nil {
		return err
	}
	if !a.DryRun && !a.SkipConfirmation {
		q := fmt.Sprintf("This will roll revision %s back to install record %d (profile %q, istioctl %s, %s, %s). Proceed? (y/N) ",
			target.Revision, target.Number, target.Profile, target.ToolVersion, target.Time.Local().Format(time.DateTime), target.Outcome)
		if err := confirm(a.In, a.Out, a.IsTerminal, q); err != nil {
			return err
		}
	}
	ap := &applier{flags: a.applyFlags, client: client, events: eventSink(a.Out, a.Output), errOut: a.ErrOut}
	err = ap.rollback(ctx, target, "")
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("interrupted: %w; run the same rollback again to finish it", err)
	}
	return err
}
