package cmd

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action"
)

// registerCompletions gives the command tree its completions (action.Completion): names
// from the cluster for -r, tag remove, rollback and -n/-i, the kubeconfig's for --context,
// --cluster and --user, profiles and spec paths for --set and the profile commands, the
// formats for -o and spec files for -f. Completion asks the cluster with its own short
// timeout and offers nothing, silently, when it does not answer.
func registerCompletions(root *cobra.Command, g *Globals) {
	flag := func(c *cobra.Command, name string, f func(*cobra.Command, string) ([]string, cobra.ShellCompDirective)) {
		if c.Flags().Lookup(name) == nil && c.PersistentFlags().Lookup(name) == nil {
			return
		}
		_ = c.RegisterFlagCompletionFunc(name, func(cmd *cobra.Command, _ []string, word string) ([]string, cobra.ShellCompDirective) {
			_ = applyConfig(cmd) // ISTIOCTL_* and the config file, as a run would see them
			return f(cmd, word)
		})
	}
	names := func(list func(ctx context.Context) []string) func(*cobra.Command, string) ([]string, cobra.ShellCompDirective) {
		return func(cmd *cobra.Command, word string) ([]string, cobra.ShellCompDirective) {
			return withPrefix(list(ctxOf(cmd)), word), cobra.ShellCompDirectiveNoFileComp
		}
	}
	offline := func(list func() []string) func(*cobra.Command, string) ([]string, cobra.ShellCompDirective) {
		return names(func(context.Context) []string { return list() })
	}
	comp := g.completion
	namespaces := names(func(ctx context.Context) []string { return comp().Namespaces(ctx) })
	flag(root, "context", offline(func() []string { return comp().Contexts() }))
	flag(root, "cluster", offline(func() []string { return comp().Clusters() }))
	flag(root, "user", offline(func() []string { return comp().Users() }))
	flag(root, "namespace", namespaces)
	flag(root, "istioNamespace", namespaces)

	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		flag(c, "revision", names(func(ctx context.Context) []string { return comp().Revisions(ctx) }))
		if formats := offeredFormats(c); formats != nil {
			flag(c, "output", func(_ *cobra.Command, word string) ([]string, cobra.ShellCompDirective) {
				return withPrefix(formats.Names(), word), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
			})
		}
		if c.Flags().Lookup("filename") != nil {
			_ = c.MarkFlagFilename("filename", "yaml", "yml", "json")
		}
		flag(c, "set", func(cmd *cobra.Command, word string) ([]string, cobra.ShellCompDirective) {
			dir, _ := cmd.Flags().GetString("manifests")
			out, final := comp().SetPaths(word, comp().Profiles(dir),
				func() []string { return comp().Revisions(ctxOf(cmd)) })
			if final || len(out) == 0 {
				return out, cobra.ShellCompDirectiveNoFileComp
			}
			return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		})
		if args := positional(c.CommandPath(), g); args != nil {
			c.ValidArgsFunction = func(cmd *cobra.Command, done []string, word string) ([]string, cobra.ShellCompDirective) {
				_ = applyConfig(cmd)
				return withPrefix(args(cmd, done), word), cobra.ShellCompDirectiveNoFileComp
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completion answers completions from the global flags as a run would see them (-i is
// parsed by the time a completion runs).
func (g *Globals) completion() *action.Completion {
	return &action.Completion{Kube: &g.Kube, IstioNamespace: g.IstioNamespace}
}

// positional completes the arguments of the commands that take names: nil for the others.
func positional(path string, g *Globals) func(cmd *cobra.Command, done []string) []string {
	comp := g.completion
	profiles := func(max int) func(*cobra.Command, []string) []string {
		return func(cmd *cobra.Command, done []string) []string {
			if len(done) >= max {
				return nil
			}
			dir, _ := cmd.Flags().GetString("manifests")
			return comp().Profiles(dir)
		}
	}
	switch path {
	case "istioctl tag remove":
		return func(cmd *cobra.Command, done []string) []string {
			if len(done) > 0 {
				return nil
			}
			return comp().Tags(ctxOf(cmd))
		}
	case "istioctl rollback":
		return func(cmd *cobra.Command, done []string) []string {
			if len(done) > 0 {
				return nil
			}
			rev, _ := cmd.Flags().GetString("revision")
			return comp().Records(ctxOf(cmd), rev)
		}
	case "istioctl profile dump":
		return profiles(1)
	case "istioctl profile diff":
		return profiles(2)
	}
	return nil
}

func ctxOf(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// withPrefix keeps the candidates that start with word (before a candidate's tab-separated
// description), as kubectl's completions do.
func withPrefix(candidates []string, word string) []string {
	var out []string
	for _, c := range candidates {
		if strings.HasPrefix(c, word) {
			out = append(out, c)
		}
	}
	return out
}
