package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// VersionReport is what `istioctl version` prints, in every output format.
type VersionReport struct {
	Client        version.Info        `json:"clientVersion"`
	Kubernetes    string              `json:"kubernetesVersion,omitempty"`
	ControlPlanes []kube.ControlPlane `json:"controlPlanes,omitempty"`
}

// VersionAction gathers the client's version and, when Remote, the cluster's.
type VersionAction struct {
	Remote    bool
	Namespace string
	Output    string
	Short     bool
	Client    func() (*kube.Client, error)
	Out       io.Writer
}

func newVersionCommand(g *Globals) *cobra.Command {
	a := &VersionAction{Client: g.Client}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client version, and the cluster's Kubernetes and Istio versions",
		Long: `Prints this istioctl's version and, unless --remote=false, the cluster's Kubernetes version and
the version of each istiod found. When the cluster cannot be asked, the client version is still
printed and the command exits 1 with the reason.`,
		Example: `  # client, Kubernetes and control plane versions
  istioctl version

  # only this binary's version, without contacting a cluster
  istioctl version --remote=false --short`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.Namespace = g.IstioNamespace
			a.Out = cmd.OutOrStdout()
			return a.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&a.Remote, "remote", true, "Also ask the cluster for its Kubernetes and Istio control plane versions")
	cmd.Flags().BoolVarP(&a.Short, "short", "s", false, "Print only the version numbers")
	cmd.Flags().StringVarP(&a.Output, "output", "o", "", "Output format: one of json|yaml (default: text)")
	return cmd
}

// Run gathers the report and prints it.
func (a *VersionAction) Run(ctx context.Context) error {
	switch a.Output {
	case "", "json", "yaml":
	default:
		return Usagef("--output %q is not supported; use json or yaml", a.Output)
	}
	rep := VersionReport{Client: version.Get()}
	if !a.Remote {
		return a.print(rep, false)
	}
	if err := a.remote(ctx, &rep); err != nil {
		// As kubectl version: what is known is printed, the failure is the exit status.
		if perr := a.print(rep, false); perr != nil {
			return perr
		}
		return fmt.Errorf("asking the cluster for its versions (--remote=false prints the client's only): %w", err)
	}
	return a.print(rep, true)
}

// remote fills in the cluster's Kubernetes and control plane versions.
func (a *VersionAction) remote(ctx context.Context, rep *VersionReport) error {
	c, err := a.Client()
	if err != nil {
		return err
	}
	sv, err := c.ServerVersion(ctx)
	if err != nil {
		return err
	}
	rep.Kubernetes = sv.GitVersion
	rep.ControlPlanes, err = c.ControlPlanes(ctx, a.Namespace)
	return err
}

func (a *VersionAction) print(rep VersionReport, remote bool) error {
	switch a.Output {
	case "json":
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(a.Out, string(b))
		return err
	case "yaml":
		b, err := yaml.Marshal(rep)
		if err != nil {
			return err
		}
		_, err = a.Out.Write(b)
		return err
	}
	w := a.Out
	if a.Short {
		fmt.Fprintf(w, "client version: %s\n", rep.Client.Version)
	} else {
		fmt.Fprintf(w, "client version: %s\n", rep.Client)
	}
	if !remote {
		return nil
	}
	fmt.Fprintf(w, "kubernetes version: %s\n", rep.Kubernetes)
	if len(rep.ControlPlanes) == 0 {
		fmt.Fprintf(w, "control plane version: none (no istiod Deployment in namespace %s)\n", a.Namespace)
		return nil
	}
	for _, cp := range rep.ControlPlanes {
		fmt.Fprintf(w, "control plane version: %s (revision %s, %s/%s, ready %s)\n", cp.Version, cp.Revision, cp.Namespace, cp.Name, cp.Ready)
	}
	return nil
}
