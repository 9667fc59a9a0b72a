package cmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/tag"
)

// UninstallAction removes a revision's control plane, or with Purge everything installed.
type UninstallAction struct {
	Spec             SpecFlags
	Revision         string
	Purge            bool
	SkipConfirmation bool
	DryRun           bool
	Verbose          bool
	IgnoreNotFound   bool
	Timeout          time.Duration
	Output           string
	Globals          *Globals
	In               io.Reader
	Out, ErrOut      io.Writer
	IsTerminal       func() bool
}

func newUninstallCommand(g *Globals) *cobra.Command {
	a := &UninstallAction{Globals: g}
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove what istioctl installed: one revision's control plane and gateways, or everything with --purge",
		Long: `Removes the objects an install labelled as its own. Without --purge only one revision (the
default one, or -r, or the one in -f) is removed and the CRDs stay; with --purge every revision
and the CRDs go, and with them every Istio resource in the cluster.`,
		Example: `  # remove the canary revision
  istioctl uninstall -r canary -y

  # remove everything, showing what would go first
  istioctl uninstall --purge --dry-run
  istioctl uninstall --purge -y

  # in a script that may run twice: a revision already gone is not an error
  istioctl uninstall -r canary -y --ignore-not-found`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.In, a.Out, a.ErrOut = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			if !a.Purge && a.Revision == "" && len(a.Spec.Files) == 0 && !cmd.Flags().Changed("set") {
				return Usagef("say what to remove: -r REVISION (\"default\" for the default one), -f FILE, --set revision=R, or --purge")
			}
			return a.Run(cmd.Context())
		},
	}
	cmd.Flags().StringSliceVarP(&a.Spec.Files, "filename", "f", nil, "The IstioOperator file of the install to remove")
	cmd.Flags().StringArrayVarP(&a.Spec.Sets, "set", "s", nil, "Override a spec field (e.g. revision=canary)")
	cmd.Flags().StringVarP(&a.Revision, "revision", "r", "", "The revision to remove")
	cmd.Flags().BoolVar(&a.Purge, "purge", false, "Remove every revision and the CRDs (and so every Istio resource)")
	cmd.Flags().BoolVarP(&a.SkipConfirmation, "skip-confirmation", "y", false, "Do not ask for confirmation (required when standard input is not a terminal)")
	cmd.Flags().BoolVar(&a.DryRun, "dry-run", false, "List what would be removed; remove nothing")
	cmd.Flags().BoolVarP(&a.Verbose, "verbose", "v", false, "List every object before removing any (the confirmation always does)")
	cmd.Flags().BoolVar(&a.IgnoreNotFound, "ignore-not-found", false, "Succeed when nothing carries the install's labels (for scripts that may run twice)")
	cmd.Flags().DurationVar(&a.Timeout, "timeout", 5*time.Minute, "How long to wait for the removed objects to be gone")
	cmd.Flags().StringVarP(&a.Output, "output", "o", "text", "Output: text or json (one event per line)")
	return cmd
}

// Run removes the targets.
func (a *UninstallAction) Run(ctx context.Context) error {
	if err := checkOutput(a.Output, "text", "json"); err != nil {
		return err
	}
	res, err := a.Spec.resolve(a.In, a.ErrOut, a.Revision)
	if err != nil {
		return err
	}
	client, err := a.Globals.Client()
	if err != nil {
		return err
	}
	if _, err := client.ServerVersion(ctx); err != nil {
		return err
	}
	in := &install.Installer{
		Client: client,
		Owner:  ownerOf(res),
		Events: eventSink(a.Out, a.Output),
	}
	uopts := install.UninstallOptions{Purge: a.Purge, DryRun: a.DryRun, Timeout: a.Timeout}
	targets, err := in.Targets(ctx, uopts)
	if err != nil {
		return err
	}
	// A spec that relies on components it does not install (gateways next to an existing
	// istiod) removes only its own objects: the revision's tags and install records belong
	// to the control plane it leaves alone.
	relying := !a.Purge && len(in.Owner.Leave) > 0
	var tags []*unstructured.Unstructured
	if !relying {
		// The revision tags pointing at the revision (every tag, with --purge) go first: an
		// injector left calling a removed control plane would fail every pod it selects.
		if tags, err = tag.UninstallTargets(ctx, client, in.Owner.Namespace, in.Owner.Rev(), a.Purge); err != nil {
			return err
		}
		targets = withTags(tags, targets)
		// The revision's install records go with it (every record with --purge), last: a
		// later rollback or install --atomic must not bring back what was removed on purpose.
		recordsOf := in.Owner.Rev()
		if a.Purge {
			recordsOf = ""
		}
		records, err := (&history.Store{Client: client, Namespace: recordNamespace(res)}).Secrets(ctx, recordsOf)
		if err != nil {
			return err
		}
		targets = append(targets, records...)
	} else if a.Output == "text" {
		printRelied(a.ErrOut, in.Owner)
	}
	if len(targets) == 0 {
		return a.nothingToRemove(ctx, client, in.Owner)
	}
	if a.Purge && (a.Revision != "" || len(a.Spec.Files) > 0 || len(a.Spec.Sets) > 0) {
		in.Events.Emit(event.Event{Type: event.Warning, Time: time.Now(),
			Message: "--purge removes every revision and the Istio CRDs: -r, -f and --set are ignored"})
	}
	warnings, err := in.UninstallWarnings(ctx, targets, uopts)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		w.Time = time.Now()
		in.Events.Emit(w)
	}
	prompt := !a.DryRun && !a.SkipConfirmation
	if prompt || (a.Verbose && a.Output == "text") {
		for _, t := range targets {
			fmt.Fprintf(a.Out, "  %s\n", kube.Describe(t))
		}
	}
	if prompt {
		what := fmt.Sprintf("revision %q", in.Owner.Rev())
		if a.Purge {
			what = "every revision and the Istio CRDs (and with them every Istio resource)"
		}
		if err := confirm(a.In, a.Out, a.IsTerminal, fmt.Sprintf("This will remove %s: the %d objects above. Proceed? (y/N) ", what, len(targets))); err != nil {
			return err
		}
	}
	for _, t := range tags {
		if !a.Purge && t.GetKind() == "MutatingWebhookConfiguration" && t.GetLabels()[tag.LabelTag] == tag.Default {
			in.Events.Emit(event.Event{Type: event.Warning, Time: time.Now(), Object: kube.Describe(t),
				Message: fmt.Sprintf("the default revision tag points at revision %q and goes with it: namespaces labelled istio-injection=enabled are not injected until 'istioctl tag set default --revision <revision>'", in.Owner.Rev())})
		}
	}
	return in.Uninstall(ctx, targets, uopts)
}

// nothingToRemove is what an uninstall that found no target says. A purge, or an uninstall
// told --ignore-not-found, has nothing left to do; naming a revision that is not there is an
// error, as kubectl delete and helm uninstall of a missing object are: a typo must not pass
// for a removal.
func (a *UninstallAction) nothingToRemove(ctx context.Context, client *kube.Client, owner install.Owner) error {
	if a.Purge {
		fmt.Fprintln(a.ErrOut, "Nothing to remove: no object carries an istioctl install's labels.")
		return nil
	}
	what := fmt.Sprintf("revision %q in namespace %s", owner.Rev(), owner.Namespace)
	if a.IgnoreNotFound {
		fmt.Fprintf(a.ErrOut, "Nothing to remove: no object carries the labels of %s.\n", what)
		return nil
	}
	installed := "none"
	if cps, err := client.ControlPlanes(ctx, owner.Namespace); err == nil && len(cps) > 0 {
		var revs []string
		for _, cp := range cps {
			revs = append(revs, cp.Revision)
		}
		slices.Sort(revs)
		installed = strings.Join(slices.Compact(revs), ", ")
	}
	return fmt.Errorf("nothing to remove: no object carries the labels of %s (control plane revisions there: %s); check -r, -f and -i, or pass --ignore-not-found", what, installed)
}

// withTags puts the tag objects first, then the other targets that are not among them.
func withTags(tags, targets []*unstructured.Unstructured) []*unstructured.Unstructured {
	seen := map[string]bool{}
	out := append([]*unstructured.Unstructured{}, tags...)
	for _, t := range tags {
		seen[t.GroupVersionKind().GroupKind().String()+"/"+kube.Describe(t)] = true
	}
	for _, t := range targets {
		if !seen[t.GroupVersionKind().GroupKind().String()+"/"+kube.Describe(t)] {
			out = append(out, t)
		}
	}
	return out
}
