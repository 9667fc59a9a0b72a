package cmd

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/pkg/printer"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// CheckAction runs verify-install or precheck.
type CheckAction struct {
	Command  string
	Checks   func() []check.Check
	Spec     SpecFlags
	Revision string
	Output   string
	FailOn   string
	// FromSpec says checks need the rendered spec even without -f (precheck does).
	FromSpec    bool
	FromVersion string
	Globals     *Globals
	In          io.Reader
	Out, ErrOut io.Writer
}

func newCheckCommand(g *Globals, use, short, example string, checks func() []check.Check, fromSpec bool) *cobra.Command {
	a := &CheckAction{Command: use, Checks: checks, FromSpec: fromSpec, Globals: g}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.In, a.Out, a.ErrOut = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			return a.Run(cmd.Context())
		},
	}
	a.Spec.add(cmd.Flags())
	cmd.Flags().StringVarP(&a.Revision, "revision", "r", "", "The control plane revision to check")
	cmd.Flags().StringVarP(&a.Output, "output", "o", "text", "Output: text, json, yaml or junit")
	cmd.Flags().StringVar(&a.FailOn, "fail-on", "error", "Exit non-zero on results of this severity or worse: error or warning")
	if use == "precheck" {
		cmd.Flags().StringVar(&a.FromVersion, "from-version", "", "The Istio version you upgrade from (e.g. 1.21): adds notes on behaviour that changed since")
	}
	return cmd
}

func newVerifyInstallCommand(g *Globals) *cobra.Command {
	return newCheckCommand(g, "verify-install",
		"Check that an install is complete and healthy: every object present, ready and as the spec renders it",
		`  # the default revision, found by its labels
  istioctl verify-install

  # against the spec that was installed, with drift shown as a diff
  istioctl verify-install -f my-spec.yaml

  # for CI
  istioctl verify-install -f my-spec.yaml -o junit > verify.xml`, check.Verify, false)
}

func newPrecheckCommand(g *Globals) *cobra.Command {
	cmd := newCheckCommand(g, "precheck",
		"Check, before installing, that the cluster and you can take the install",
		`  istioctl x precheck
  istioctl x precheck -f my-spec.yaml -o json
  istioctl x precheck --from-version 1.21`, check.Precheck, true)
	return cmd
}

func newExperimentalCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "experimental",
		Aliases: []string{"x", "exp"},
		Short:   "Commands whose interface may still change",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newPrecheckCommand(g))
	return cmd
}

// Run runs the checks and prints the report; the error says whether it failed.
func (a *CheckAction) Run(ctx context.Context) error {
	if err := checkOutput(a.Output, "text", "json", "yaml", "junit"); err != nil {
		return err
	}
	if a.FailOn != string(check.Error) && a.FailOn != string(check.Warning) {
		return Usagef("--fail-on %q: use error or warning", a.FailOn)
	}
	client, err := a.Globals.Client()
	if err != nil {
		return err
	}
	if _, err := client.ServerVersion(ctx); err != nil {
		return err
	}
	env := &check.Env{Client: client, IstioNamespace: a.Globals.IstioNamespace, Revision: a.Revision, Version: version.Version, FromVersion: a.FromVersion}
	withSpec := a.FromSpec || len(a.Spec.Files) > 0 || len(a.Spec.Sets) > 0
	if withSpec {
		res, manifests, err := a.Spec.render(a.In, a.ErrOut, a.Revision, false)
		if err != nil {
			return err
		}
		env.Manifests = manifests
		env.Revision = res.IOP.Spec.Revision
		if ns := res.IOP.Metadata.Namespace; ns != "" {
			env.IstioNamespace = ns
		}
		if err := withExternal(env, res); err != nil {
			return err
		}
	}
	var rep *check.Report
	if withSpec {
		rep = check.Run(ctx, a.Command, a.Checks(), env)
	} else {
		// Without a spec: every installed revision (or the one asked for), found by the
		// ownership labels, each checked as installed.
		revisions := []string{a.Revision}
		if a.Revision == "" {
			if revisions, err = installedRevisions(ctx, env); err != nil {
				return err
			}
		}
		var reports []*check.Report
		for _, rev := range revisions {
			renv := *env
			renv.Revision = rev
			installed, err := installedObjects(ctx, &renv)
			if err != nil {
				return err
			}
			if len(installed) == 0 {
				if rev == "" {
					rev = "default"
				}
				return fmt.Errorf("no Istio installation found for revision %q in namespace %s: install it, or pass -f with the spec that was installed", rev, env.IstioNamespace)
			}
			renv.Installed = installed
			r := check.Run(ctx, a.Command, a.Checks(), &renv)
			if len(revisions) > 1 {
				r.Prefix(fmt.Sprintf("revision %s: ", revName(rev)))
			}
			reports = append(reports, r)
		}
		rep = check.Merge(a.Command, reports...)
	}
	if err := printer.Report(a.Out, rep, printer.Format(a.Output)); err != nil {
		return err
	}
	if rep.FailedAt(check.Severity(a.FailOn)) {
		if a.Output == "text" {
			fmt.Fprintf(a.ErrOut, "%s found problems: see the ✘ lines above\n", a.Command)
		}
		return &ExitError{Code: 1}
	}
	if a.Output == "text" {
		if a.Command == "verify-install" {
			fmt.Fprintln(a.Out, "✔ Istio is installed and verified successfully")
		} else {
			fmt.Fprintln(a.Out, "✔ No issues found when checking the cluster. Istio is safe to install or upgrade!")
		}
	}
	return nil
}

func revName(rev string) string {
	if rev == "" {
		return "default"
	}
	return rev
}

// installedRevisions lists the revisions whose control plane runs in the istio namespace
// ("" for the default one); just the default when none does.
func installedRevisions(ctx context.Context, env *check.Env) ([]string, error) {
	cps, err := env.Client.ControlPlanes(ctx, env.IstioNamespace)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, cp := range cps {
		rev := cp.Revision
		if rev == "default" {
			rev = ""
		}
		if !seen[rev] {
			seen[rev] = true
			out = append(out, rev)
		}
	}
	if len(out) == 0 {
		out = []string{""}
	}
	sort.Strings(out)
	return out, nil
}

// installedObjects finds what the install of the revision labelled as its own.
func installedObjects(ctx context.Context, env *check.Env) ([]*unstructured.Unstructured, error) {
	owner := install.Owner{Namespace: env.IstioNamespace, Revision: env.Revision}
	var out []*unstructured.Unstructured
	kinds := append([]schema.GroupVersionKind{{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}}, install.PruneKinds...)
	lists, err := env.Client.ListKinds(ctx, kinds, owner.Selector())
	if err != nil {
		return nil, err
	}
	for _, items := range lists {
		for i := range items {
			o := &items[i]
			if len(o.GetOwnerReferences()) == 0 {
				out = append(out, o)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetKind()+out[i].GetName() < out[j].GetKind()+out[j].GetName() })
	return out, nil
}
