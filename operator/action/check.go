package action

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/revision"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// The severities a check run can fail at.
const (
	FailOnError   = string(check.Error)
	FailOnWarning = string(check.Warning)
)

// Check runs verify-install or precheck: the checks of one selection, against a spec or,
// for verify-install without one, against what each installed revision labelled as its own.
type Check struct {
	*Config
	// Command names the report ("verify-install", "precheck").
	Command string
	// Kind is the check selection: the precheck's or verify-install's.
	Kind check.Kind
	// Spec is the spec to check against; nil checks what is installed (verify-install).
	Spec *spec.Options
	// Revision is -r: the revision to check ("" for every installed one without a spec).
	Revision string
	// FromVersion is precheck's --from-version.
	FromVersion string
	// FailOn is the severity the report fails at: error (default) or warning.
	FailOn string
	// RemoteContexts are precheck's other clusters of the mesh: the cross-cluster checks
	// (check.CrossCluster) compare them with this one.
	RemoteContexts []string
}

// CheckResult is a check run's report and its verdict.
type CheckResult struct {
	Report *check.Report
	// Failed says a result of FailOn's severity or worse failed.
	Failed bool
}

// Verify is verify-install: every expected object present, healthy and as the spec renders.
func Verify(cfg *Config) *Check {
	return &Check{Config: cfg, Command: "verify-install", Kind: check.KindVerify}
}

// Precheck is x precheck: whether the cluster and the user can take the install. It always
// checks against a spec (the default profile when none is given).
func Precheck(cfg *Config) *Check {
	return &Check{Config: cfg, Command: "precheck", Kind: check.KindPrecheck, Spec: &spec.Options{}}
}

// checks is the command's selection; verify-install adds the link checks when the
// cluster has a name (multiCluster.clusterName): it is then meant to be part of a mesh of
// several clusters.
func (a *Check) checks(env *check.Env) []check.Check {
	if a.Kind == check.KindPrecheck {
		return check.Precheck()
	}
	if env.ClusterName != "" {
		return append(check.Verify(), check.Links()...)
	}
	return check.Verify()
}

// Run runs the checks and returns the report; it emits no events. It takes no lock: a
// warning (Config.Warn) says when another run is writing.
func (a *Check) Run(ctx context.Context) (*CheckResult, error) {
	failOn := a.FailOn
	if failOn == "" {
		failOn = FailOnError
	}
	if failOn != FailOnError && failOn != FailOnWarning {
		return nil, fmt.Errorf("--fail-on %q: use error or warning", a.FailOn)
	}
	client, err := a.connect(ctx)
	if err != nil {
		return nil, err
	}
	a.warnIfWriting(ctx, client)
	env := &check.Env{Client: client, IstioNamespace: a.istioNamespace(), Revision: a.Revision, Version: a.Version, FromVersion: a.FromVersion}
	var rep *check.Report
	if a.Spec != nil {
		opts := *a.Spec
		opts.Revision = a.Revision
		res, manifests, err := a.render(opts, false)
		if err != nil {
			return nil, err
		}
		if a.Kind != check.KindPrecheck {
			if err := a.pinFromRecord(ctx, client, res, manifests); err != nil {
				return nil, err
			}
		}
		env.Manifests = manifests
		env.Revision = res.IOP.Spec.Revision
		if ns := res.IOP.Metadata.Namespace; ns != "" {
			env.IstioNamespace = ns
		}
		if err := withExternal(env, res); err != nil {
			return nil, err
		}
		env.ClusterName, env.ManifestsDir = link.OwnName(link.NameSources{Values: res.IOP.Spec.Values}), res.IOP.Spec.InstallPackagePath
		rep = check.Run(ctx, a.Command, a.checks(env), env)
		if a.Kind == check.KindPrecheck && len(a.RemoteContexts) > 0 {
			mesh, err := a.meshReport(ctx, client, res, manifests)
			if err != nil {
				return nil, err
			}
			rep = check.Merge(a.Command, rep, mesh)
		}
	} else if rep, err = a.installed(ctx, env); err != nil {
		return nil, err
	}
	rep.Kind = a.Kind
	return &CheckResult{Report: rep, Failed: rep.FailedAt(check.Severity(failOn))}, nil
}

// installed checks, without a spec, every installed revision (or the one asked for), found
// by the ownership labels, each as installed.
func (a *Check) installed(ctx context.Context, env *check.Env) (*check.Report, error) {
	revisions := []string{a.Revision}
	if a.Revision == "" {
		var err error
		if revisions, err = installedRevisions(ctx, env); err != nil {
			return nil, err
		}
	}
	var reports []*check.Report
	for _, rev := range revisions {
		renv := *env
		renv.Revision = rev
		installed, err := installedObjects(ctx, &renv)
		if err != nil {
			return nil, err
		}
		if len(installed) == 0 {
			return nil, fmt.Errorf("no Istio installation found for revision %q in namespace %s: install it, or pass -f with the spec that was installed", ownership.Rev(rev), env.IstioNamespace)
		}
		renv.Installed = installed
		renv.ClusterName = link.OwnName(link.NameSources{Objects: installed})
		r := check.Run(ctx, a.Command, a.checks(&renv), &renv)
		if len(revisions) > 1 {
			r.Prefix(fmt.Sprintf("revision %s: ", ownership.Rev(rev)))
		}
		reports = append(reports, r)
	}
	return check.Merge(a.Command, reports...), nil
}

// installedRevisions lists the revisions whose control plane runs in the istio namespace
// ("" for the default one); just the default when none does.
func installedRevisions(ctx context.Context, env *check.Env) ([]string, error) {
	cps, err := revision.ControlPlanes(ctx, env.Client, env.IstioNamespace)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, cp := range cps {
		rev := ownership.Revision(cp.Revision)
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
	in := &install.Installer{Client: env.Client, Owner: ownership.Owner{Namespace: env.IstioNamespace, Revision: env.Revision}}
	return in.Installed(ctx)
}
