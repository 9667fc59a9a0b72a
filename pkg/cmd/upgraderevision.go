package cmd

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/printer"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// The upgrade strategies (--strategy).
const (
	strategyInPlace  = "in-place"
	strategyRevision = "revision"
)

// revisionStrategy are upgrade's flags of --strategy revision.
type revisionStrategy struct {
	Strategy       string
	ToRevision     string
	BatchSize      int
	MaxUnavailable int
	Namespaces     []string
	Relabel        bool
	Rollback       bool
	PruneOld       bool
}

// withRevisionStrategy adds --strategy and its flags to upgrade: with --strategy revision
// the command runs action.RevisionUpgrade; in-place (the default) runs what it ran before.
func withRevisionStrategy(cmd *cobra.Command, a *InstallCommand) *cobra.Command {
	s := &revisionStrategy{}
	fs := cmd.Flags()
	fs.StringVar(&s.Strategy, "strategy", strategyInPlace, "How to upgrade: in-place (the revision's control plane is replaced) or revision (a new revision beside the old one, the workloads moved to it in health-gated batches; "+spec.DocsURL+"upgrade.md)")
	fs.StringVar(&s.ToRevision, "to-revision", "", "With --strategy revision: the new revision (default: from this istioctl's version, e.g. 1-31-0)")
	fs.IntVar(&s.BatchSize, "batch-size", 5, "With --strategy revision: how many workloads a batch restarts")
	fs.IntVar(&s.MaxUnavailable, "max-unavailable", 0, "With --strategy revision: how many workloads of a batch restart at once (0: the whole batch)")
	fs.StringSliceVar(&s.Namespaces, "namespaces", nil, "With --strategy revision: restart only the workloads of these namespaces, a resumed run's recorded ones too (a first subset; run again without it for the rest; not with --rollback)")
	fs.BoolVar(&s.Relabel, "relabel", false, "With --strategy revision: relabel the namespaces labelled istio.io/rev=<old revision> to the new one (without it they stay on the old revision)")
	fs.BoolVar(&s.Rollback, "rollback", false, "With --strategy revision: return the workloads the last revision upgrade moved (its tags, labels and restarts) to the old revision")
	fs.BoolVar(&s.PruneOld, "prune-old", false, "With --strategy revision: once every workload moved, remove the old revision (refused while any pod uses it)")
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		switch s.Strategy {
		case strategyInPlace:
			for _, f := range []string{"to-revision", "batch-size", "max-unavailable", "namespaces", "relabel", "rollback", "prune-old"} {
				if c.Flags().Changed(f) {
					return Usagef("--%s needs --strategy revision", f)
				}
			}
			return run(c, args)
		case strategyRevision:
			if c.Flags().Changed("revision") {
				return Usagef("-r/--revision names the revision upgraded in place; with --strategy revision name the new revision with --to-revision")
			}
			if a.Verify {
				return Usagef("--verify checks an install or an in-place upgrade, as upstream's; after --strategy revision run verify-install -r <new revision>")
			}
			return runWith(&a.In, &a.Out, &a.ErrOut, func(ctx context.Context) error { return s.run(ctx, a) })(c, args)
		}
		return Usagef("--strategy %q: one of %s, %s", s.Strategy, strategyInPlace, strategyRevision)
	}
	return cmd
}

// defaultToRevision is the new revision's name from the version: 1.31.0 -> 1-31-0.
func defaultToRevision(v string) string {
	v, _, _ = strings.Cut(strings.TrimPrefix(v, "v"), "+")
	return strings.ReplaceAll(v, ".", "-")
}

// run is upgrade --strategy revision: flags into an action.RevisionUpgrade.
func (s *revisionStrategy) run(ctx context.Context, a *InstallCommand) error {
	to := s.ToRevision
	if to == "" {
		to = defaultToRevision(version.Version)
	}
	in := &action.RevisionUpgrade{
		Config: a.Globals.writerConfig(a.ErrOut, a.Command, a.lockFlags),
		Spec:   a.Spec.options(a.In, to),
		Migrate: action.MigrateOptions{BatchSize: s.BatchSize, MaxUnavailable: s.MaxUnavailable, Namespaces: s.Namespaces,
			Relabel: s.Relabel},
		Rollback: s.Rollback, PruneOld: s.PruneOld, DryRun: a.DryRun,
		ReadinessTimeout: a.Timeout, HistoryMax: a.HistoryMax, SkipAdmissionCheck: a.SkipAdmissionCheck,
		Replan: a.prompts(),
		Events: eventSink(a.Out, a.Output, a.Verbose, false),
	}
	if !a.prompts() {
		_, err := in.Run(ctx, nil)
		return err
	}
	if err := needTerminal(a.In, a.IsTerminal); err != nil {
		return err
	}
	plan, err := in.Plan(ctx)
	if err != nil {
		return err
	}
	m := plan.Migration
	printer.RevisionUpgradePlan(a.Out, plan.From, plan.To, m.Remaining(), len(m.Batches)-m.Done, m.Writes())
	if err := confirm(a.In, a.Out, a.IsTerminal, "Proceed? (y/N) "); err != nil {
		return err
	}
	_, err = in.Run(ctx, plan)
	return err
}
