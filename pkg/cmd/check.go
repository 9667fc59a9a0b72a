package cmd

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/pkg/printer"
)

// CheckCommand is verify-install or precheck: flags into an action.Check.
type CheckCommand struct {
	Command     string
	Spec        SpecFlags
	Revision    string
	Output      string
	FailOn      string
	FromVersion string
	// Verbose prints every passing check of a precheck (a line per section otherwise).
	Verbose bool
	// RemoteContexts are precheck's --remote-contexts.
	RemoteContexts []string
	Globals        *Globals
	In             io.Reader
	Out, ErrOut    io.Writer
}

func newCheckCommand(g *Globals, use, short, example string) *cobra.Command {
	a := &CheckCommand{Command: use, Globals: g}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    runWith(&a.In, &a.Out, &a.ErrOut, a.Run),
	}
	a.Spec.add(cmd.Flags())
	cmd.Flags().StringVarP(&a.Revision, "revision", "r", "", "The control plane revision to check")
	outputFlag(cmd.Flags(), &a.Output, printer.ReportFormats, "Output", "")
	cmd.Flags().StringVar(&a.FailOn, "fail-on", "error", "Exit non-zero on results of this severity or worse: error or warning")
	if use == "precheck" {
		cmd.Flags().StringVar(&a.FromVersion, "from-version", "", "The Istio version you upgrade from (e.g. 1.21): adds notes on behaviour that changed since")
		cmd.Flags().BoolVarP(&a.Verbose, "verbose", "v", false, "Print every passing check, not a line per section that passed")
		cmd.Flags().String("output-threshold", "Warning", "Accepted for upstream's scripts: Info, Warning or Error")
		differs(cmd.Flags(), "output-threshold", outputThreshold)
		cmd.Flags().Bool("skip-controlplane", false, "Accepted for upstream's scripts")
		differs(cmd.Flags(), "skip-controlplane", skipControlplane)
		cmd.Flags().StringSliceVar(&a.RemoteContexts, "remote-contexts", nil, "Kubeconfig contexts of the mesh's other clusters: checks that the clusters agree (names, mesh ID, networks and their gateways, cacerts roots)")
	}
	return cmd
}

// What precheck does instead of upstream's flags of these names.
const (
	outputThreshold  = "ignored: failures and warnings are always printed, passes with -v; --fail-on sets the exit code"
	skipControlplane = "ignored: the control plane checks run (they only warn about what is installed)"
)

func newVerifyInstallCommand(g *Globals) *cobra.Command {
	return newCheckCommand(g, "verify-install",
		"Check that an install is complete and healthy: every object present, ready and as the spec renders it",
		`  # the default revision, found by its labels
  istioctl verify-install

  # against the spec that was installed, with drift shown as a diff
  istioctl verify-install -f my-spec.yaml

  # for CI
  istioctl verify-install -f my-spec.yaml -o junit > verify.xml`)
}

func newPrecheckCommand(g *Globals) *cobra.Command {
	cmd := newCheckCommand(g, "precheck",
		"Check, before installing, that the cluster and you can take the install",
		`  istioctl x precheck
  istioctl x precheck -f my-spec.yaml -o json
  istioctl x precheck --from-version 1.21`)
	return cmd
}

func newExperimentalCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "experimental",
		Aliases: []string{"x", "exp"},
		Short:   "Commands whose interface may still change",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newPrecheckCommand(g), newFleetCommand(g), newRevisionCommand(g), newImagesCommand(g))
	return cmd
}

// Run runs the checks and prints the report; the error says whether it failed.
func (a *CheckCommand) Run(ctx context.Context) error {
	res, err := a.run(ctx)
	if err == nil && res.Failed {
		return &ExitError{Code: 1}
	}
	return err
}

// run runs the checks and prints the report.
func (a *CheckCommand) run(ctx context.Context) (*action.CheckResult, error) {
	if a.FailOn != action.FailOnError && a.FailOn != action.FailOnWarning {
		return nil, Usagef("--fail-on %q: use error or warning", a.FailOn)
	}
	cfg := a.Globals.Config(a.ErrOut)
	c := action.Verify(cfg)
	if a.Command == "precheck" {
		c = action.Precheck(cfg)
	}
	// Precheck always checks a spec (the default profile without -f or --set);
	// verify-install only when given one.
	if c.Spec != nil || len(a.Spec.Files) > 0 || len(a.Spec.Sets) > 0 {
		opts := a.Spec.options(a.In, "")
		c.Spec = &opts
	}
	c.Revision, c.FromVersion, c.FailOn, c.RemoteContexts = a.Revision, a.FromVersion, a.FailOn, a.RemoteContexts
	res, err := c.Run(ctx)
	if err != nil {
		return nil, err
	}
	short := printer.ReportOptions{Short: a.Command == "precheck" && !a.Verbose}
	if err := printer.Report(a.Out, res.Report, printer.Format(a.Output), short); err != nil {
		return nil, err
	}
	printer.Verdict(a.Out, a.ErrOut, res.Report, res.Failed, printer.Format(a.Output))
	return res, nil
}
