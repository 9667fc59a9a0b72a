package cmd

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/pkg/printer"
)

// ImagesListAction is x images list.
type ImagesListAction struct {
	Spec        SpecFlags
	Revision    string
	Output      string
	FromCluster bool
	Allowed     []string
	Globals     *Globals
	In          io.Reader
	Out         io.Writer
	ErrOut      io.Writer
}

func newImagesCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "images",
		Short: "The images an install needs or a cluster runs, and copying them to a registry",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	a := &ImagesListAction{Globals: g}
	list := &cobra.Command{
		Use:   "list",
		Short: "List every image each component and the injected proxy would run (or, with --from-cluster, run now)",
		Long: `Resolves the spec (profile, -f files, --set flags) and renders it offline: every image each
component's workloads run, and the proxy istiod injects into pods and gateways, with the spec
field that sets its registry. --from-cluster lists what the cluster's pods run instead: their
containers, injected sidecars included, and their sidecar.istio.io/proxyImage annotations.
Images from registries being retired (gcr.io/istio-release, registry.istio.io) are flagged.`,
		Example: `  istioctl x images list --set profile=demo
  istioctl x images list -f my-spec.yaml --allowed-registries registry.example.com/mesh
  istioctl x images list --from-cluster -o json`,
		Args: cobra.NoArgs,
		RunE: runWith(&a.In, &a.Out, &a.ErrOut, a.Run),
	}
	a.Spec.addWithRevision(list.Flags(), &a.Revision)
	outputFlag(list.Flags(), &a.Output, printer.DocumentFormats, "Output", "")
	list.Flags().BoolVar(&a.FromCluster, "from-cluster", false, "List the images the cluster's pods run now instead of a spec's")
	addAllowedRegistries(list, &a.Allowed)
	cmd.AddCommand(list, newImagesMirrorCommand(g))
	return cmd
}

// addAllowedRegistries registers --allowed-registries.
func addAllowedRegistries(cmd *cobra.Command, allowed *[]string) {
	cmd.Flags().StringSliceVar(allowed, "allowed-registries", nil,
		"Refuse, before anything is written, a spec that would render or inject an image from outside these registries (host[:port][/path]); repeatable")
}

// Run lists the images.
func (a *ImagesListAction) Run(ctx context.Context) error {
	cfg := a.Globals.Config(a.ErrOut)
	cfg.AllowedRegistries = a.Allowed
	list, err := (&action.ImagesList{Config: cfg, Spec: a.Spec.options(a.In, a.Revision), FromCluster: a.FromCluster}).Run(ctx)
	if err != nil {
		return err
	}
	return printer.Images(a.Out, a.ErrOut, list, printer.Format(a.Output))
}

// ImagesMirrorAction is x images mirror.
type ImagesMirrorAction struct {
	Spec     SpecFlags
	Revision string
	Output   string
	To       string
	Images   []string
	Parallel int
	DryRun   bool
	Globals  *Globals
	In       io.Reader
	Out      io.Writer
	ErrOut   io.Writer
}

func newImagesMirrorCommand(g *Globals) *cobra.Command {
	a := &ImagesMirrorAction{Globals: g}
	cmd := &cobra.Command{
		Use:   "mirror --to REGISTRY[/PATH]",
		Short: "Copy every image an install needs to another registry, by digest",
		Long: `Copies the images x images list prints for the spec (or those given with --image) to
REGISTRY[/PATH], each under its last path component with its tag (docker.io/istio/pilot:1.31.0
lands at REGISTRY/pilot:1.31.0), so that --set hub=REGISTRY[/PATH] pulls every one. Copies are by
digest, every platform of a multi-platform image; images the target already holds at the same
digest are skipped. Credentials come from the docker config (docker login). The command fails,
naming each image not copied and the registry at fault, unless every image is there.`,
		Example: `  istioctl x images mirror --set profile=demo --to registry.example.com/mesh
  istioctl x images mirror -f my-spec.yaml --to registry.example.com/mesh --dry-run`,
		Args: cobra.NoArgs,
		RunE: runWith(&a.In, &a.Out, &a.ErrOut, a.Run),
	}
	a.Spec.addWithRevision(cmd.Flags(), &a.Revision)
	outputFlag(cmd.Flags(), &a.Output, printer.EventFormats, "Output", " (json: one line per image)")
	cmd.Flags().StringVar(&a.To, "to", "", "Target registry, with an optional path (registry.example.com:5000/mesh)")
	cmd.Flags().StringSliceVar(&a.Images, "image", nil, "Copy these images instead of the spec's; repeatable")
	cmd.Flags().IntVar(&a.Parallel, "parallel", action.DefaultMirrorParallel, "Images copied at once")
	cmd.Flags().BoolVar(&a.DryRun, "dry-run", false, "Say what would be copied; copy nothing")
	return cmd
}

// Run mirrors the images.
func (a *ImagesMirrorAction) Run(ctx context.Context) error {
	if a.To == "" {
		return Usagef("--to is required: the registry to copy the images to")
	}
	p := printer.NewMirrorEvents(a.Out, printer.Format(a.Output), isTerminalFile(a.Out))
	res, err := (&action.ImagesMirror{Config: a.Globals.Config(a.ErrOut), Spec: a.Spec.options(a.In, a.Revision),
		Images: a.Images, To: a.To, Parallel: a.Parallel, DryRun: a.DryRun, Event: p.Event}).Run(ctx)
	if err != nil {
		return err
	}
	printer.MirrorResult(a.Out, res, printer.Format(a.Output))
	return nil
}
