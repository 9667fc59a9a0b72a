package cmd

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/pkg/printer"
)

// RemoteClustersCommand is remote-clusters: flags into an action.RemoteClusters.
type RemoteClustersCommand struct {
	Revision, Output, ManifestsDir string
	Wait                           bool
	Timeout                        time.Duration
	Globals                        *Globals
	Out, ErrOut                    io.Writer
}

func newRemoteClustersCommand(g *Globals) *cobra.Command {
	a := &RemoteClustersCommand{Globals: g}
	cmd := &cobra.Command{
		Use:   "remote-clusters",
		Short: "Lists the remote clusters each istiod instance is connected to.",
		Long: `Lists the clusters each istiod of the istio namespace reads, as upstream does (NAME SECRET STATUS
ISTIOD REVISION, from istiod's /debug/clusterz through a port-forward), then checks every link
Secret (label istio/multiCluster=true) from here, without istiod: that it is in the istio
namespace, names its cluster once and consistently, decodes, authenticates in a way istiod
accepts, authenticates at its apiserver, may read everything the reader ClusterRole grants,
reaches the cluster of that name, and that its token does not expire within 7 days.
STATUS is "unknown" when no istiod could be asked: it never says synced without istiod.
Exits 1 when any link is broken; --wait retries until --timeout.`,
		Example: `  istioctl remote-clusters
  istioctl remote-clusters --context cluster-1 -o json

  # in a script, after linking: wait until every link works
  istioctl remote-clusters --wait --timeout 2m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.Out, a.ErrOut = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return a.Run(cmd.Context())
		},
	}
	cmd.Flags().StringVarP(&a.Revision, "revision", "r", "", "Control plane revision")
	outputFlag(cmd.Flags(), &a.Output, printer.ListFormats, "Output format", "")
	cmd.Flags().BoolVar(&a.Wait, "wait", false, "Retry while any link is broken, until --timeout")
	cmd.Flags().DurationVar(&a.Timeout, "timeout", 2*time.Minute, "How long --wait retries")
	cmd.Flags().StringVarP(&a.ManifestsDir, "manifests", "d", "", "A directory of charts to render the reader ClusterRole from (default: the embedded ones)")
	return cmd
}

// Run lists, checks and prints; a broken link exits 1.
func (a *RemoteClustersCommand) Run(ctx context.Context) error {
	f := printer.Format(a.Output)
	r := &action.RemoteClusters{Config: a.Globals.Config(a.ErrOut), Revision: a.Revision, ManifestsDir: a.ManifestsDir,
		Wait: a.Wait, Timeout: a.Timeout}
	if a.Wait {
		r.Retry = func(attempt int, res *action.RemoteClustersResult) { printer.Retrying(a.ErrOut, attempt, res.Report) }
	}
	res, err := r.Run(ctx)
	if err != nil {
		return err
	}
	if err := printer.RemoteClusters(a.Out, res.Rows, res.Report, f); err != nil {
		return err
	}
	if res.Broken {
		printer.Line(a.ErrOut, "remote-clusters found broken links: see the ✘ lines above")
		return &ExitError{Code: 1}
	}
	return nil
}
