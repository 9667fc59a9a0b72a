package cmd

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action"
)

// RollbackCommand is rollback: flags into an action.Rollback.
type RollbackCommand struct {
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
	a := &RollbackCommand{Globals: g, IsTerminal: g.Streams.IsTerminal}
	cmd := &cobra.Command{
		Use:   "rollback [RECORD]",
		Short: "Re-install an earlier install record of a revision (by default the previous successful one)",
		Long: `Re-installs install record RECORD of the revision (see 'istioctl history'), by default the
previous successful one: its resolved spec is resolved again with this istioctl and installed as
install does, so what newer installs added is pruned. The rollback is recorded as a new record.
Only a record istioctl sealed is re-installed ('istioctl history' marks the others UNTRUSTED), and
the plan says what the rollback changes in RBAC and k8s overlays before it writes.`,
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

// Run plans the rollback, asks unless -y, and rolls back; with -y (and for a dry run) the
// action plans itself, under the cluster lock.
func (a *RollbackCommand) Run(ctx context.Context) error {
	rb := &action.Rollback{
		Config:           a.Globals.writerConfig(a.ErrOut, "istioctl rollback", a.lockFlags),
		Number:           a.Number,
		Revision:         a.Revision,
		DryRun:           a.DryRun,
		ReadinessTimeout: a.Timeout,
		HistoryMax:       a.HistoryMax,
		TakeOwnership:    a.TakeOwnership,
		Replan:           a.prompts(),
		Events:           eventSink(a.Out, a.Output, a.Verbose, a.summarizes()),
	}
	if !a.summarizes() {
		_, err := rb.Run(ctx, nil)
		return err
	}
	plan, err := rb.Plan(ctx)
	if err != nil {
		return err
	}
	if a.prompts() {
		if err := needTerminal(a.In, a.IsTerminal); err != nil {
			return err
		}
	}
	if goOn, err := a.summarize(ctx, a.Out, plan.Install); err != nil || !goOn {
		return err
	}
	if a.prompts() {
		t := plan.Target
		if err := confirm(a.In, a.Out, a.IsTerminal, fmt.Sprintf("This will roll revision %s back to install record %d (profile %q, istioctl %s, %s, %s). Proceed? (y/N) ",
			t.Revision, t.Number, t.Profile, t.ToolVersion, t.Time.Local().Format(time.DateTime), t.Outcome)); err != nil {
			return err
		}
	}
	_, err = rb.Run(ctx, plan)
	return err
}
