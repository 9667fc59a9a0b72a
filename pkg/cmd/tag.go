package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/pkg/printer"
)

func newTagCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tag",
		Short: "Create, list and remove revision tags: stable names for control plane revisions",
		Long: `A revision tag is an alias of a control plane revision for sidecar injection. Namespaces labelled
istio.io/rev=<tag> are injected by the revision the tag points at, so moving a set of namespaces to
a new revision is one 'istioctl tag set <tag> --revision <new> --overwrite' instead of relabelling
each of them. The tag "default" also serves namespaces labelled istio-injection=enabled and
validates Istio configuration cluster-wide.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return Usagef("unknown subcommand %q for \"istioctl tag\"; run 'istioctl tag --help' for the list", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newTagSetCommand(g, false), newTagSetCommand(g, true), newTagListCommand(g), newTagRemoveCommand(g))
	return cmd
}

// oneTag takes exactly one tag argument.
func oneTag(what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return Usagef("must provide a tag for %s", what)
		case len(args) > 1:
			return Usagef("must provide a single tag for %s", what)
		}
		return nil
	}
}

// TagSetAction creates or moves a revision tag (tag set), or prints it (tag generate).
type TagSetAction struct {
	Tag, Revision, WebhookName, Manifests                     string
	Overwrite, AutoInject, SkipConfirmation, DryRun, Generate bool
	lockFlags
	Globals     *Globals
	In          io.Reader
	Out, ErrOut io.Writer
	IsTerminal  func() bool
}

func newTagSetCommand(g *Globals, generate bool) *cobra.Command {
	a := &TagSetAction{Globals: g, Generate: generate, IsTerminal: g.Streams.IsTerminal}
	cmd := &cobra.Command{
		Use:   "set <revision-tag>",
		Short: "Create or move a revision tag",
		Example: `  # namespaces labelled istio.io/rev=prod are injected by revision 1-30-0
  istioctl tag set prod --revision 1-30-0
  kubectl label namespace my-app istio.io/rev=prod

  # move them to 1-31-0 (restart their workloads afterwards)
  istioctl tag set prod --revision 1-31-0 --overwrite

  # make canary the default revision: istio-injection=enabled namespaces and validation
  istioctl tag set default --revision canary --overwrite`,
		Args: oneTag("creation"),
	}
	if generate {
		cmd.Use = "generate <revision-tag>"
		cmd.Short = "Print the objects of a revision tag instead of applying them"
		cmd.Example = `  istioctl tag generate prod --revision 1-30-0 > prod.yaml
  kubectl apply -f prod.yaml`
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		a.Tag = args[0]
		a.In, a.Out, a.ErrOut = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
		if !cmd.Flags().Changed("revision") || a.Revision == "" {
			return Usagef("--revision is required: the control plane revision the tag points at")
		}
		return a.Run(cmd.Context())
	}
	fs := cmd.Flags()
	fs.StringVarP(&a.Revision, "revision", "r", "", "Control plane revision to reference from the tag (\"default\" for the default revision)")
	fs.BoolVar(&a.Overwrite, "overwrite", false, "Allow changing a tag that exists (without it, an existing tag is refused)")
	fs.StringVar(&a.WebhookName, "webhook-name", "", "Name of the tag's MutatingWebhookConfiguration (default istio-revision-tag-<tag>)")
	fs.BoolVar(&a.AutoInject, "auto-inject-namespaces", false, "The default tag injects every namespace without an injection label")
	fs.StringVarP(&a.Manifests, "manifests", "d", "", "Directory with charts/ to render with instead of the built-in ones")
	fs.BoolVarP(&a.SkipConfirmation, "skip-confirmation", "y", false, "Do not ask for confirmation when the tag would overlap another injector (required when standard input is not a terminal)")
	if !generate {
		fs.BoolVar(&a.DryRun, "dry-run", false, "Check everything with the cluster (server-side dry run), write nothing")
		a.lockFlags.add(fs)
	}
	return cmd
}

// Run generates the tag and applies or prints it.
func (a *TagSetAction) Run(ctx context.Context) error {
	ts := &action.TagSet{Config: a.Globals.writerConfig(a.ErrOut, "istioctl tag set", a.lockFlags), Tag: a.Tag, Revision: a.Revision,
		WebhookName: a.WebhookName, ManifestsDir: a.Manifests, Overwrite: a.Overwrite, AutoInject: a.AutoInject, DryRun: a.DryRun,
		Generate: a.Generate, Events: eventSink(a.ErrOut, "text", false, false)}
	p, err := ts.Plan(ctx)
	if err != nil {
		return err
	}
	if len(p.Overlaps) > 0 {
		printer.TagOverlaps(a.ErrOut, p.Overlaps)
		if !a.Generate && !a.SkipConfirmation && !a.DryRun {
			if err := needTerminal(a.In, a.IsTerminal); err != nil {
				return err
			}
			preview, err := ts.Preview(ctx, p)
			if err != nil {
				return err
			}
			printer.Summary(a.Out, preview, true)
			if err := confirm(a.In, a.Out, a.IsTerminal, "Apply anyways? [y/N] "); err != nil {
				return err
			}
			ts.Replan = true
		}
	}
	if a.Generate {
		out, err := p.YAML()
		if err != nil {
			return err
		}
		_, err = a.Out.Write(out)
		return err
	}
	changes, err := ts.Run(ctx, p)
	if a.DryRun || err != nil {
		printer.TagChanges(a.Out, changes)
	}
	if err != nil {
		return err
	}
	printer.TagSet(a.Out, a.Tag, a.Revision, a.DryRun)
	return nil
}

// TagListAction lists the revision tags.
type TagListAction struct {
	Output  string
	Globals *Globals
	Out     io.Writer
}

func newTagListCommand(g *Globals) *cobra.Command {
	a := &TagListAction{Globals: g}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"show"},
		Short:   "List the revision tags: where each points and which namespaces use it",
		Example: "  istioctl tag list\n  istioctl tag list -o json\n  istioctl tag list -o jsonpath='{.items[*].tag}'",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return Usagef("tag list command does not accept arguments")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.Out = cmd.OutOrStdout()
			return a.Run(cmd.Context())
		},
	}
	outputFlag(cmd.Flags(), &a.Output, printer.ListFormats, "Output format", "")
	return cmd
}

// Run prints the tags.
func (a *TagListAction) Run(ctx context.Context) error {
	tags, err := (&action.TagList{Config: a.Globals.Config(io.Discard)}).Run(ctx)
	if err != nil {
		return err
	}
	return printer.Tags(a.Out, tags, printer.Format(a.Output))
}

// TagRemoveAction removes a revision tag.
type TagRemoveAction struct {
	Tag              string
	SkipConfirmation bool
	lockFlags
	Globals     *Globals
	In          io.Reader
	Out, ErrOut io.Writer
	IsTerminal  func() bool
}

func newTagRemoveCommand(g *Globals) *cobra.Command {
	a := &TagRemoveAction{Globals: g, IsTerminal: g.Streams.IsTerminal}
	cmd := &cobra.Command{
		Use:     "remove <revision-tag>",
		Aliases: []string{"delete"},
		Short:   "Remove a revision tag (namespaces labelled with it are no longer injected)",
		Long: `Removes the tag's MutatingWebhookConfiguration, ValidatingWebhookConfiguration (the default tag's)
and Service. Namespaces labelled istio.io/rev=<tag> are no longer injected, so istioctl asks for
confirmation when some are: check with 'istioctl tag list' first.`,
		Example: "  istioctl tag remove prod",
		Args:    oneTag("removal"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.Tag = args[0]
			a.In, a.Out, a.ErrOut = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			return a.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVarP(&a.SkipConfirmation, "skip-confirmation", "y", false, "Do not ask for confirmation when namespaces still use the tag (required when standard input is not a terminal)")
	a.lockFlags.add(cmd.Flags())
	return cmd
}

// Run removes the tag, asking first when namespaces still use it.
func (a *TagRemoveAction) Run(ctx context.Context) error {
	tr := &action.TagRemove{Config: a.Globals.writerConfig(io.Discard, "istioctl tag remove", a.lockFlags), Tag: a.Tag,
		Events: eventSink(a.ErrOut, "text", false, false)}
	p, err := tr.Plan(ctx)
	if err != nil {
		return err
	}
	if len(p.Namespaces) > 0 && !a.SkipConfirmation {
		if err := needTerminal(a.In, a.IsTerminal); err != nil {
			return err
		}
		printer.Summary(a.Out, p.Summary(), true)
		q := fmt.Sprintf("Caution, found %d namespace(s) still injected by tag %q: %s\nProceed with operation? [y/N] ",
			len(p.Namespaces), a.Tag, strings.Join(p.Namespaces, " "))
		if err := confirm(a.In, a.Out, a.IsTerminal, q); err != nil {
			return err
		}
		tr.Replan = true
	}
	if err := tr.Run(ctx, p); err != nil {
		return err
	}
	printer.TagRemoved(a.Out, a.Tag, p.Objects)
	return nil
}
