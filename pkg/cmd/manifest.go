package cmd

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/render"
)

func newManifestCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "manifest",
		Short: "Render the Kubernetes manifests of an install spec",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newManifestGenerateCommand(g))
	return cmd
}

// ManifestGenerateAction renders a spec to YAML without contacting a cluster.
type ManifestGenerateAction struct {
	Spec       SpecFlags
	Revision   string
	Output     string
	Components []string
	In         io.Reader
	Out        io.Writer
	ErrOut     io.Writer
}

func newManifestGenerateCommand(g *Globals) *cobra.Command {
	a := &ManifestGenerateAction{}
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Print the Kubernetes objects an install spec renders to (offline)",
		Long: `Resolves the spec (profile, -f files, --set flags), renders every enabled component and prints
the objects in install order. It never contacts a cluster; the output is the same on every run.`,
		Example: `  # the default profile
  istioctl manifest generate

  # the demo profile, only istiod, into a file
  istioctl manifest generate --set profile=demo --component Pilot -o istiod.yaml

  # one file per component into a directory
  istioctl manifest generate -f my-spec.yaml -o out/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.In, a.Out, a.ErrOut = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			return a.Run(cmd.Context())
		},
	}
	a.Spec.add(cmd.Flags())
	cmd.Flags().StringVarP(&a.Revision, "revision", "r", "", "Control plane revision (the same as --set revision=R)")
	cmd.Flags().StringVarP(&a.Output, "output", "o", "", "Write to this file, or to this directory one file per component (a path ending in / or an existing directory)")
	cmd.Flags().StringSliceVar(&a.Components, "component", nil, "Render only these components (Base, Pilot, Cni, Ztunnel, IngressGateways, EgressGateways); repeatable")
	return cmd
}

// Run renders and writes the manifests.
func (a *ManifestGenerateAction) Run(context.Context) error {
	var only []component.Name
	for _, c := range a.Components {
		n, err := component.Parse(c)
		if err != nil {
			return Usagef("--component: %v", err)
		}
		only = append(only, n)
	}
	_, manifests, err := a.Spec.render(a.In, a.ErrOut, a.Revision, true, only...)
	if err != nil {
		return err
	}
	if a.Output != "" && isDirTarget(a.Output) {
		return writeDir(a.Output, manifests)
	}
	out, err := render.YAML(render.All(manifests))
	if err != nil {
		return err
	}
	if a.Output != "" {
		return os.WriteFile(a.Output, out, 0o644)
	}
	_, err = a.Out.Write(out)
	return err
}

func isDirTarget(p string) bool {
	if strings.HasSuffix(p, "/") {
		return true
	}
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// writeDir writes <Component>.yaml per component (gateways together).
func writeDir(dir string, ms []render.Manifest) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	byComponent := map[component.Name][]render.Manifest{}
	var order []component.Name
	for _, m := range ms {
		if _, ok := byComponent[m.Instance.Name]; !ok {
			order = append(order, m.Instance.Name)
		}
		byComponent[m.Instance.Name] = append(byComponent[m.Instance.Name], m)
	}
	for _, name := range order {
		out, err := render.YAML(render.All(byComponent[name]))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, string(name)+".yaml"), out, 0o644); err != nil {
			return err
		}
	}
	return nil
}
