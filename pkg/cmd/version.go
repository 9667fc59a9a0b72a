package cmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/pkg/printer"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// VersionReport is what `istioctl version` prints, in every output format.
type VersionReport = printer.VersionReport

// VersionAction is version: flags into an action.Version.
type VersionAction struct {
	Remote bool
	Output string
	Short  bool
	// Revision limits the control planes to this revision's.
	Revision string
	Globals  *Globals
	Out      io.Writer
}

func newVersionCommand(g *Globals) *cobra.Command {
	a := &VersionAction{Globals: g}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client version, and the cluster's Kubernetes and Istio versions",
		Long: `Prints this istioctl's version and, unless --remote=false, the cluster's Kubernetes version and
the version of each istiod found. When the cluster cannot be asked, the client version is still
printed and the command exits 1 with the reason.`,
		Example: `  # client, Kubernetes and control plane versions
  istioctl version

  # only this binary's version, without contacting a cluster; all of its build information
  istioctl version --remote=false
  istioctl version --remote=false --short=false`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.Out = cmd.OutOrStdout()
			return a.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&a.Remote, "remote", true, "Also ask the cluster for its Kubernetes and Istio control plane versions")
	cmd.Flags().StringVarP(&a.Revision, "revision", "r", "", "Only this control plane revision's version")
	cmd.Flags().BoolVarP(&a.Short, "short", "s", true, "Print only the version numbers (--short=false: the build information too)")
	outputFlag(cmd.Flags(), &a.Output, printer.DocumentFormats, "Output format", "")
	return cmd
}

// Run gathers the report and prints it.
func (a *VersionAction) Run(ctx context.Context) error {
	v := &action.Version{Config: a.Globals.Config(io.Discard)}
	rep := &VersionReport{Client: version.Get()}
	var err error
	if a.Remote {
		var cluster *action.ClusterVersions
		cluster, err = v.Run(ctx)
		rep.Kubernetes, rep.ControlPlanes = cluster.Kubernetes, cluster.ControlPlanes
		if a.Revision != "" {
			kept := rep.ControlPlanes[:0]
			for _, cp := range rep.ControlPlanes {
				if cp.Revision == a.Revision {
					kept = append(kept, cp)
				}
			}
			rep.ControlPlanes = kept
		}
	}
	if err != nil {
		// As kubectl version: what is known is printed, the failure is the exit status.
		if perr := printer.Version(a.Out, rep, printer.Format(a.Output), a.Short, false, v.Namespace()); perr != nil {
			return perr
		}
		return fmt.Errorf("asking the cluster for its versions (--remote=false prints the client's only): %w", err)
	}
	where := v.Namespace()
	if a.Revision != "" {
		where += " of revision " + a.Revision
	}
	return printer.Version(a.Out, rep, printer.Format(a.Output), a.Short, a.Remote, where)
}
