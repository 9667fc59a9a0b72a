package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/printer"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

func newManifestCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "manifest",
		Short: "Render an install spec's Kubernetes manifests, translate them for Helm, or install them",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	// As upstream: manifest install is install.
	cmd.AddCommand(newManifestGenerateCommand(g), newManifestTranslateCommand(g), newInstallCommand(g, "install"))
	return cmd
}

// clusterSpecific is what ours does instead of upstream's manifest generate --cluster-specific.
const clusterSpecific = "ignored: the render never asks the cluster; set values.global.platform yourself (install checks the cluster)"

// ManifestGenerateAction renders a spec to YAML without contacting a cluster.
type ManifestGenerateAction struct {
	Spec       SpecFlags
	Revision   string
	Output     string
	Components []string
	// Allowed is --allowed-registries.
	Allowed []string
	In      io.Reader
	Out     io.Writer
	ErrOut  io.Writer
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
		RunE: runWith(&a.In, &a.Out, &a.ErrOut, a.Run),
	}
	a.Spec.addWithRevision(cmd.Flags(), &a.Revision)
	cmd.Flags().StringVarP(&a.Output, "output", "o", "", "Write to this file, or to this directory one file per component (a path ending in / or an existing directory)")
	addAllowedRegistries(cmd, &a.Allowed)
	// Upstream's: rendering writes nothing anyway.
	cmd.Flags().Bool("dry-run", false, "Write nothing (manifest generate never does; for upstream's scripts)")
	cmd.Flags().Bool("cluster-specific", false, "Accepted for upstream's scripts; the render is the same for every cluster")
	differs(cmd.Flags(), "cluster-specific", clusterSpecific)
	cmd.Flags().StringSliceVar(&a.Components, "component", nil, fmt.Sprintf("Render only these components (%s); repeatable", strings.Join(action.ComponentNames(), ", ")))
	return cmd
}

// Run renders and writes the manifests.
func (a *ManifestGenerateAction) Run(ctx context.Context) error {
	dir := a.Output != "" && printer.IsDirTarget(a.Output)
	mg := &action.ManifestGenerate{Config: &action.Config{Warn: printer.Warnings(a.ErrOut), Version: version.Version, AllowedRegistries: a.Allowed},
		Spec: a.Spec.options(a.In, a.Revision), Components: a.Components, PerComponent: dir}
	ms, err := mg.Run(ctx)
	if err != nil {
		return err
	}
	names, docs := make([]string, len(ms)), make([]io.WriterTo, len(ms))
	for i, m := range ms {
		names[i], docs[i] = m.Component, m.YAML
	}
	return printer.Manifests(a.Out, a.Output, dir, names, docs)
}

// ManifestTranslateAction turns a spec into Helm values, charts and scripts (offline).
type ManifestTranslateAction struct {
	Spec     SpecFlags
	Revision string
	Output   string
	In       io.Reader
	Out      io.Writer
	ErrOut   io.Writer
}

func newManifestTranslateCommand(g *Globals) *cobra.Command {
	a := &ManifestTranslateAction{}
	cmd := &cobra.Command{
		Use:   "translate",
		Short: "Translate an install spec into Helm releases: values, charts and the scripts that move an install under Helm (offline)",
		Long: `Resolves the spec (profile, -f files, --set flags) and writes, into the -o directory (a new temporary
one without -o), for every enabled component, gateways included: <name>-values.yaml, the values of
its Helm release; install-<name>.sh, which marks the component's live objects as the release's and
runs helm upgrade --install over them; the charts they install (charts/); and README.md, the steps.
Helm then renders the same objects istioctl installed, so nothing is recreated. It never contacts a
cluster. See ` + spec.DocsURL + `migrate.md.`,
		Example: `  # the default profile, into a new temporary directory
  istioctl manifest translate

  # an install spec, into helm/
  istioctl manifest translate -f my-spec.yaml -o helm/

  # the demo profile with tracing
  istioctl manifest translate --set profile=demo --set meshConfig.enableTracing=true -o helm/`,
		Args: cobra.NoArgs,
		RunE: runWith(&a.In, &a.Out, &a.ErrOut, a.Run),
	}
	a.Spec.addWithRevision(cmd.Flags(), &a.Revision)
	cmd.Flags().StringVarP(&a.Output, "output", "o", "", "Directory to write into (created if missing; default: a new temporary directory)")
	return cmd
}

// Run translates and writes the output.
func (a *ManifestTranslateAction) Run(ctx context.Context) error {
	mt := &action.ManifestTranslate{Config: &action.Config{Warn: printer.Warnings(a.ErrOut), Version: version.Version},
		Spec: a.Spec.options(a.In, a.Revision)}
	t, err := mt.Run(ctx)
	if err != nil {
		return err
	}
	dir, err := t.Write(a.Output)
	if err != nil {
		return err
	}
	for _, r := range t.Releases {
		if len(r.Differs) > 0 {
			printer.Warnings(a.ErrOut)(fmt.Sprintf("Helm release %s renders %d object(s) otherwise than istioctl (k8s settings have no Helm value): see README.md", r.Name, len(r.Differs)))
		}
	}
	printer.Line(a.Out, fmt.Sprintf("Output written to %s! See the README.md for next steps", dir))
	return nil
}
