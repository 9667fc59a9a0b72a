package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kubeflags"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/printer"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// UsageError marks a bad command line (unknown command or flag, wrong arguments); main
// exits 64 for it, as upstream istioctl does. It is the action layer's type: a setting an
// action cannot use as given is a bad command line too.
type UsageError = action.UsageError

// ExitError ends the command with Code and no error message (the command has printed
// what it has to say), e.g. profile diff when the profiles differ.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// Usagef builds a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Streams is where commands read and write; tests swap them.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// IsTerminal, when set, says whether In is a terminal one may ask on (tests); nil asks
	// the file.
	IsTerminal func() bool
}

// runWith is the RunE of a command whose action takes no arguments: it hands the action
// the command's streams, then runs it.
func runWith(in *io.Reader, out, errOut *io.Writer, run func(context.Context) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		*in, *out, *errOut = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
		return worded(*errOut, run(cmd.Context()))
	}
}

// worded prints an error the printer words (a pre-write gate's), leaving main only its
// exit code.
func worded(errOut io.Writer, err error) error {
	var blocked *action.Blocked
	if !errors.As(err, &blocked) {
		return err
	}
	// What wraps it keeps its words, before the gate's.
	prefix, ok := strings.CutSuffix(err.Error(), blocked.Error())
	if !ok {
		return err
	}
	printer.Blocked(errOut, prefix, blocked)
	return &ExitError{Code: event.ExitCode(err)}
}

// Globals are the flags every command shares.
type Globals struct {
	Kube           kubeflags.Flags
	IstioNamespace string
	Streams        Streams
	profiling      profiling
	lockPeriods    lockPeriods
	klog           klogLevel
}

// Config is what the actions of a command share, from the global flags; the spec's and the
// charts' warnings go to errOut.
func (g *Globals) Config(errOut io.Writer) *action.Config {
	return &action.Config{Kube: &g.Kube, IstioNamespace: g.IstioNamespace, Warn: printer.Warnings(errOut), Version: version.Version}
}

// NewRootCommand builds the istioctl command tree.
func NewRootCommand(streams Streams) *cobra.Command {
	return newRootCommand(&Globals{Streams: streams})
}

func newRootCommand(g *Globals) *cobra.Command {
	streams := g.Streams
	root := &cobra.Command{
		Use:   "istioctl",
		Short: "Install, upgrade, verify and remove the Istio service mesh",
		Long: `istioctl installs Istio from an IstioOperator spec, waits until it is healthy, verifies it and removes it.

Any flag can also be set as ISTIOCTL_<FLAG> (ISTIOCTL_KUBECONFIG, ISTIOCTL_LOCK_TIMEOUT) or in
$HOME/.istioctl/config.yaml (ISTIOCTL_CONFIG names another file); the command line wins. NO_COLOR
turns colours off. Docs: ` + spec.DocsURL,
		SilenceUsage:  true,
		SilenceErrors: true,
		// A root without Run would print help for an unknown command and exit 0.
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyConfig(cmd); err != nil {
				return err
			}
			if err := checkOutput(cmd); err != nil {
				return err
			}
			warnDiffering(cmd)
			if err := g.klog.apply(); err != nil {
				return err
			}
			return g.profiling.start()
		},
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	addGlobalFlags(root.PersistentFlags(), g)

	root.AddCommand(newVersionCommand(g), newProfileCommand(g), newManifestCommand(g),
		newInstallCommand(g, "install"), newUpgradeCommand(g), newUninstallCommand(g),
		newHistoryCommand(g), newRollbackCommand(g),
		newVerifyInstallCommand(g), newTagCommand(g), newExperimentalCommand(g),
		newCreateRemoteSecretCommand(g), newRemoteClustersCommand(g))
	registerCompletions(root, g)
	root.SetHelpCommand(newHelpCommand())
	usage := root.UsageFunc()
	root.SetUsageFunc(func(cmd *cobra.Command) error { defer hideConnectionFlags(cmd)(); return usage(cmd) })
	// Made now rather than when it runs, so that usageArgs sees its commands.
	root.InitDefaultCompletionCmd()
	usageArgs(root)
	return root
}

// newHelpCommand is cobra's help, but an unknown topic is a bad command line.
func newHelpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		ValidArgsFunction: func(c *cobra.Command, args []string, word string) ([]string, cobra.ShellCompDirective) {
			cmd, _, err := c.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []string
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), word) {
					out = append(out, sub.Name())
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return Usagef("unknown help topic %q; run 'istioctl --help' for the list", strings.Join(args, " "))
			}
			return cmd.Help()
		},
	}
}

// subcommandArgs refuses arguments to a command that only groups others, suggesting the
// nearest (cobra's "Did you mean this?").
func subcommandArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	cmd.SuggestionsMinimumDistance = 2 // cobra's own, which it sets only on its path
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
	}
	return Usagef("%s\nRun '%s --help' for the list", msg, cmd.CommandPath())
}

// usageArgs makes every command's refusal of its arguments a bad command line (exit 64);
// a command that groups others takes none of its own.
func usageArgs(c *cobra.Command) {
	if c.HasSubCommands() {
		c.Args = subcommandArgs
		if !c.Runnable() {
			// Cobra would print the help of one without Run, whatever its arguments.
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	}
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				var usage *UsageError
				if !errors.As(err, &usage) {
					err = &UsageError{Err: err}
				}
				return err
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

func addGlobalFlags(fs *pflag.FlagSet, g *Globals) {
	g.Kube.AddFlags(fs)
	fs.VisitAll(func(f *pflag.Flag) { _ = fs.SetAnnotation(f.Name, connectionAnnotation, []string{"true"}) })
	fs.StringVarP(&g.IstioNamespace, "istioNamespace", "i", action.DefaultIstioNamespace, "Istio system namespace")
	g.profiling.addFlags(fs)
	g.lockPeriods.addFlags(fs)
	g.klog.addFlags(fs)
}

// connectionAnnotation marks the global flags that say how to reach a cluster.
const connectionAnnotation = "istioctl/connection"

// offline are the commands that never reach a cluster (with the connection flags they still
// read): their help leaves the others out. manifest generate keeps them for upstream's
// --cluster-specific.
var offline = map[string][]string{
	"istioctl profile": nil, "istioctl manifest translate": nil, "istioctl completion": nil, "istioctl help": nil,
	// It reads the kubeconfig to check the fleet's contexts exist.
	"istioctl experimental fleet dump": {"kubeconfig"},
}

// hideConnectionFlags hides, while an offline command prints its usage, the connection
// flags it does not read; it returns what shows them again.
func hideConnectionFlags(c *cobra.Command) func() {
	keep, ok := []string(nil), false
	for path, k := range offline {
		if c.CommandPath() == path || strings.HasPrefix(c.CommandPath(), path+" ") {
			keep, ok = k, true
		}
	}
	var hidden []*pflag.Flag
	if ok {
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
			if f.Annotations[connectionAnnotation] != nil && !slices.Contains(keep, f.Name) && !f.Hidden {
				f.Hidden, hidden = true, append(hidden, f)
			}
		})
	}
	return func() {
		for _, f := range hidden {
			f.Hidden = false
		}
	}
}

// applyConfig gives flags the user did not set their value from ISTIOCTL_<FLAG> in the
// environment, then from the config file ($HOME/.istioctl/config.yaml, or ISTIOCTL_CONFIG).
// Flags on the command line always win.
func applyConfig(cmd *cobra.Command) error {
	v := viper.New()
	v.SetEnvPrefix("ISTIOCTL")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	path := os.Getenv("ISTIOCTL_CONFIG")
	explicit := path != ""
	if !explicit {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, ".istioctl", "config.yaml")
		}
	}
	if path != "" {
		v.SetConfigFile(path)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			var notFound viper.ConfigFileNotFoundError
			if explicit || !(errors.As(err, &notFound) || errors.Is(err, os.ErrNotExist)) {
				return fmt.Errorf("reading the istioctl config file %s: %w", path, err)
			}
		}
	}
	var errs []error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		key := f.Name
		if alias, ok := f.Annotations[envAnnotation]; ok {
			// A command's own flag hiding a global one reads another key, or none.
			if len(alias) == 0 {
				return
			}
			key = alias[0]
		}
		if f.Changed || !v.IsSet(key) {
			return
		}
		if err := f.Value.Set(v.GetString(key)); err != nil {
			errs = append(errs, fmt.Errorf("%s (from ISTIOCTL_%s or %s): %w",
				f.Name, strings.ToUpper(strings.ReplaceAll(key, "-", "_")), path, err))
		}
	})
	return errors.Join(errs...)
}
