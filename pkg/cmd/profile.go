package cmd

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/pkg/printer"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

func newProfileCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profile",
		Short: "List, dump and compare the install profiles",
		Long: `A profile is a named IstioOperator spec laid over the default profile. These commands show
what a profile, optionally with -f files and --set overrides, resolves to.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newProfileListCommand(g), newProfileDumpCommand(g), newProfileDiffCommand(g))
	return cmd
}

// ProfileListAction lists the available profiles.
type ProfileListAction struct {
	Manifests string
	Output    string
	Out       io.Writer
}

func newProfileListCommand(g *Globals) *cobra.Command {
	a := &ProfileListAction{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the available profiles",
		Example: `  istioctl profile list
  istioctl profile list -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.Out = cmd.OutOrStdout()
			return a.Run(cmd.Context())
		},
	}
	cmd.Flags().StringVarP(&a.Manifests, "manifests", "d", "", "Directory with charts/ and profiles/ to use instead of the built-in ones")
	outputFlag(cmd.Flags(), &a.Output, printer.DocumentFormats, "Output format", " (text: a list)")
	return cmd
}

// Run lists the profiles.
func (a *ProfileListAction) Run(ctx context.Context) error {
	names, err := (&action.ProfileList{ManifestsDir: a.Manifests}).Run(ctx)
	if err != nil {
		return err
	}
	return printer.Profiles(a.Out, names, printer.Format(a.Output))
}

// ProfileDumpAction prints a resolved spec.
type ProfileDumpAction struct {
	Profile    string
	Spec       SpecFlags
	ConfigPath string
	Output     string
	In         io.Reader
	Out        io.Writer
	ErrOut     io.Writer
}

func newProfileDumpCommand(g *Globals) *cobra.Command {
	a := &ProfileDumpAction{}
	cmd := &cobra.Command{
		Use:   "dump [profile]",
		Short: "Print the IstioOperator spec a profile, -f files and --set flags resolve to",
		Example: `  # the default profile, fully merged
  istioctl profile dump

  # the demo profile with an override, only the pilot component
  istioctl profile dump demo --set components.pilot.k8s.replicaCount=2 --config-path components.pilot

  # the --set flags that rebuild a spec file
  istioctl profile dump -f my-spec.yaml -o flags`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				a.Profile = args[0]
			}
			a.In, a.Out, a.ErrOut = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			return a.Run(cmd.Context())
		},
	}
	a.Spec.add(cmd.Flags())
	cmd.Flags().StringVarP(&a.ConfigPath, "config-path", "p", "", "Print only this part of the spec (a path relative to spec, e.g. components.pilot)")
	outputFlag(cmd.Flags(), &a.Output, printer.ProfileDumpFormats, "Output format", "")
	return cmd
}

// Run resolves and prints the spec.
func (a *ProfileDumpAction) Run(ctx context.Context) error {
	d, err := (&action.ProfileDump{Config: &action.Config{Warn: printer.Warnings(a.ErrOut), Version: version.Version}, Spec: a.Spec.options(a.In, ""),
		Profile: a.Profile, ConfigPath: a.ConfigPath}).Run(ctx)
	if err != nil {
		return err
	}
	return printer.ProfileDump(a.Out, printer.Format(a.Output), d.Spec, d.Flags)
}

// ProfileDiffAction shows how two resolved profiles differ.
type ProfileDiffAction struct {
	A, B      string
	Manifests string
	Out       io.Writer
}

func newProfileDiffCommand(g *Globals) *cobra.Command {
	a := &ProfileDiffAction{}
	cmd := &cobra.Command{
		Use:     "diff <profile> <profile>",
		Short:   "Show the differences between two profiles as a unified diff; exit 1 when they differ",
		Example: `  istioctl profile diff default demo`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return Usagef("profile diff takes two profiles, got %d argument(s)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			a.A, a.B, a.Out = args[0], args[1], cmd.OutOrStdout()
			return a.Run(cmd.Context())
		},
	}
	cmd.Flags().StringVarP(&a.Manifests, "manifests", "d", "", "Directory with charts/ and profiles/ to use instead of the built-in ones")
	return cmd
}

// Run prints the diff; the error is an ExitError with code 1 when the profiles differ.
func (a *ProfileDiffAction) Run(ctx context.Context) error {
	diff, err := (&action.ProfileDiff{A: a.A, B: a.B, ManifestsDir: a.Manifests}).Run(ctx)
	if err != nil {
		return err
	}
	if err := printer.ProfileDiff(a.Out, a.A, a.B, diff); err != nil {
		return err
	}
	if diff != "" {
		return &ExitError{Code: 1}
	}
	return nil
}
