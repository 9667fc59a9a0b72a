package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/external"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// SpecFlags are the flags that pick an install spec, shared by every command that resolves
// one (install, manifest generate, profile dump, verify-install, ...).
type SpecFlags struct {
	Files     []string
	Sets      []string
	Manifests string
	Force     bool
}

// addSpecFlags registers -f, --set, --manifests and --force.
func (f *SpecFlags) add(fs *pflag.FlagSet) {
	fs.StringSliceVarP(&f.Files, "filename", "f", nil, "IstioOperator spec files, overlaid left to right; - reads standard input (last only)")
	fs.StringArrayVarP(&f.Sets, "set", "s", nil, "Override a spec field: path=value, relative to spec (e.g. profile=demo, values.global.logging.level=debug); repeatable")
	fs.StringVarP(&f.Manifests, "manifests", "d", "", "Directory with charts/ and profiles/ to use instead of the built-in ones")
	fs.BoolVar(&f.Force, "force", false, "Proceed even when the spec has validation errors (they are shown as warnings)")
}

// options turns the flags into resolution options.
func (f *SpecFlags) options(stdin io.Reader) spec.Options {
	return spec.Options{Files: f.Files, Stdin: stdin, Sets: f.Sets, ManifestsDir: f.Manifests, Force: f.Force}
}

// resolve resolves the spec the flags describe (with --revision as an alias), printing its
// warnings to errOut.
func (f *SpecFlags) resolve(in io.Reader, errOut io.Writer, revision string) (*spec.Resolved, error) {
	opts := f.options(in)
	opts.Revision = revision
	res, err := spec.Resolve(opts)
	printWarnings(errOut, res)
	return res, err
}

// render resolves and renders the spec (only the given components, if any), printing the
// spec's and the charts' warnings to errOut.
//
// lazy leaves CRD bodies unparsed (see render.Renderer.LazyCRDs): for printing only.
func (f *SpecFlags) render(in io.Reader, errOut io.Writer, revision string, lazy bool, only ...component.Name) (*spec.Resolved, []render.Manifest, error) {
	res, err := f.resolve(in, errOut, revision)
	if err != nil {
		return res, nil, err
	}
	r, err := render.NewRenderer(res.IOP.Spec.InstallPackagePath)
	if err != nil {
		return res, nil, err
	}
	r.LazyCRDs = lazy
	manifests, warnings, err := r.Render(res, only...)
	for _, w := range warnings {
		fmt.Fprintf(errOut, "! warning: %s\n", w)
	}
	return res, manifests, err
}

// ownerOf is the ownership identity of a resolved spec's install.
func ownerOf(res *spec.Resolved) install.Owner {
	ns := res.IOP.Metadata.Namespace
	if ns == "" {
		ns = "istio-system"
	}
	return install.Owner{Name: res.IOP.Metadata.Name, Namespace: ns, Revision: res.IOP.Spec.Revision, Version: version.Version,
		Leave: external.FromSpec(res.IOP).Relied}
}
