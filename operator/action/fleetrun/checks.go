package fleetrun

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/bounded"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/fleet"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kubeflags"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Fleet is the fleet commands (x fleet dump, precheck, verify): a fleet file, each of its
// clusters reached through its own kubeconfig context.
type Fleet struct {
	*action.Config
	// File is the fleet file (-f; "-" reads Stdin).
	File  string
	Stdin io.Reader
	// FailOn is the severity the report fails at: error (default) or warning.
	FailOn string
}

// Dump is fleet dump's result.
type Dump = fleet.Dump

// loadFleet reads the fleet file and resolves every cluster's spec; say says the specs'
// warnings (dump), which the checks otherwise say as they render.
func (a *Fleet) loadFleet(say bool) (*fleet.Fleet, map[string]*spec.Resolved, error) {
	return a.loadFleetFrom(say, fleet.Load)
}

// loadFleetFrom is loadFleet with the loader of the fleet file (fleet.LoadOffline for dump).
func (a *Fleet) loadFleetFrom(say bool, load func(string, io.Reader, []string) (*fleet.Fleet, error)) (*fleet.Fleet, map[string]*spec.Resolved, error) {
	flags := a.Kube
	if flags == nil {
		flags = &kubeflags.Flags{}
	}
	if flags.Context != "" {
		return nil, nil, &action.UsageError{Err: fmt.Errorf("--context %s: the fleet commands reach each cluster through the context the fleet file names", flags.Context)}
	}
	f, err := load(a.File, a.Stdin, flags.Contexts())
	if err != nil {
		return nil, nil, err
	}
	for _, p := range f.Warnings {
		a.Say(p.Error())
	}
	resolved := map[string]*spec.Resolved{}
	for _, c := range f.Clusters {
		res, err := spec.Resolve(f.Spec(c))
		if res != nil && say {
			for _, p := range res.Warnings {
				a.Say("cluster " + c.Name + ": " + p.Error())
			}
		}
		if err != nil {
			return nil, nil, fmt.Errorf("cluster %s: %w", c.Name, err)
		}
		resolved[c.Name] = res
	}
	return f, resolved, nil
}

// Dump is fleet dump: what each cluster gets and the links, without touching a cluster.
func (a *Fleet) Dump(context.Context) (*Dump, error) {
	f, resolved, err := a.loadFleetFrom(true, fleet.LoadOffline)
	if err != nil {
		return nil, err
	}
	return f.Dump(resolved), nil
}

// member is the Config of one cluster: the connection flags with its context, and none of
// the flags that name one cluster's server or user.
func (a *Fleet) member(c *fleet.Cluster, warn func(string)) *action.Config {
	k := kubeflags.Flags{Timeout: kubeflags.DefaultTimeout}
	if a.Kube != nil {
		k = kubeflags.Flags{Kubeconfig: a.Kube.Kubeconfig, As: a.Kube.As, AsGroups: a.Kube.AsGroups, AsUID: a.Kube.AsUID,
			Timeout: a.Kube.Timeout, RequestTimeout: a.Kube.RequestTimeout}
	}
	k.Context = c.Context
	return &action.Config{Kube: &k, IstioNamespace: a.IstioNamespace, Warn: warn, NewClient: a.NewClient, Lock: a.Lock, Version: a.Version,
		AllowedRegistries: a.AllowedRegistries}
}

// memberRun is one cluster's part of a fleet check run.
type memberRun struct {
	cluster *fleet.Cluster
	cfg     *action.Config
	report  *check.Report
	input   check.ClusterInput
	// revision is its control plane's; primaryNamespace its primary's istio namespace.
	revision, primaryNamespace string
}

// Precheck is fleet precheck: every cluster's precheck, in parallel, then the checks across
// clusters and of the links the fleet will make. A cluster that cannot be reached fails its
// own section; the others are still checked.
func (a *Fleet) Precheck(ctx context.Context) (*action.CheckResult, error) {
	return a.run(ctx, "fleet precheck", check.KindPrecheck, action.Precheck)
}

// Verify is fleet verify: every cluster's verify-install against its spec (with the link
// checks of remote-clusters, as its spec names the cluster), then the checks across
// clusters and that every link the fleet makes is there.
func (a *Fleet) Verify(ctx context.Context) (*action.CheckResult, error) {
	return a.run(ctx, "fleet verify", check.KindVerify, func(cfg *action.Config) *action.Check { c := action.Verify(cfg); c.Spec = &spec.Options{}; return c })
}

func (a *Fleet) run(ctx context.Context, command string, kind check.Kind, selection func(*action.Config) *action.Check) (*action.CheckResult, error) {
	failOn := a.FailOn
	if failOn == "" {
		failOn = action.FailOnError
	}
	if failOn != action.FailOnError && failOn != action.FailOnWarning {
		return nil, fmt.Errorf("--fail-on %q: use error or warning", a.FailOn)
	}
	f, resolved, err := a.loadFleet(false)
	if err != nil {
		return nil, err
	}
	declared := make([]*check.MeshValues, len(f.Clusters))
	for i, c := range f.Clusters {
		if declared[i], err = declaredMesh(f, c, resolved[c.Name]); err != nil {
			return nil, err
		}
	}
	var mu sync.Mutex
	runs := make([]*memberRun, len(f.Clusters))
	var wg sync.WaitGroup
	for i, c := range f.Clusters {
		warn := func(s string) {
			mu.Lock()
			defer mu.Unlock()
			a.Say("cluster " + c.Name + ": " + s)
		}
		r := &memberRun{cluster: c, cfg: a.member(c, warn), revision: resolved[c.Name].IOP.Spec.Revision}
		if c.Primary != "" {
			r.primaryNamespace = fleet.Namespace(resolved[c.Primary])
		}
		r.input = check.ClusterInput{Name: c.Name, Context: c.Context, Role: string(c.Role), Primary: c.Primary,
			ControlPlane: c.Role.ControlPlane(), IstioNamespace: fleet.Namespace(resolved[c.Name]), Declared: declared[i]}
		runs[i] = r
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.report, r.input.Client, r.input.Unreachable = a.member1(ctx, r, f, command, selection)
		}()
	}
	wg.Wait()
	reports := make([]*check.Report, 0, len(runs)+2)
	inputs := make([]check.ClusterInput, len(runs))
	for i, r := range runs {
		r.report.Prefix("cluster " + r.cluster.Name + ": ")
		reports = append(reports, r.report)
		inputs[i] = r.input
	}
	reports = append(reports, check.RunCross(ctx, command, check.CrossCluster(), inputs))
	reports = append(reports, a.links(ctx, command, f, resolved, runs))
	rep := check.Join(command, reports...)
	rep.Kind, rep.Fleet = kind, true
	return &action.CheckResult{Report: rep, Failed: rep.FailedAt(check.Severity(failOn))}, nil
}

// declaredMesh is what the fleet declares of cluster c for the cross-cluster checks: its
// spec's values, the east-west gateway the fleet gives it, the root of the cacerts it
// writes there (none: the cluster's own cacerts is compared).
func declaredMesh(f *fleet.Fleet, c *fleet.Cluster, res *spec.Resolved) (*check.MeshValues, error) {
	v := action.DeclaredMesh(res, nil)
	v.Remote = v.Remote || !c.Role.ControlPlane()
	if _, ok := f.EastWest(c, res.IOP.Spec.Revision); ok {
		v.GatewayNetworks = append(v.GatewayNetworks, c.Network)
	}
	if cc := f.CACertsOf(c); cc != nil {
		root, err := bounded.ReadFile(cc.Files["root-cert.pem"])
		if err != nil {
			return nil, fmt.Errorf("cluster %s: cacerts %s: %w", c.Name, cc.Dir, err)
		}
		v.RootPEM = root
	}
	return v, nil
}

// unreachableCheck is the result of a cluster the run could not reach.
const unreachableCheck = "cluster-reachable"

// member1 runs one cluster's checks; a cluster that cannot be reached (or whose checks
// cannot run) is one failed result naming it.
func (a *Fleet) member1(ctx context.Context, r *memberRun, f *fleet.Fleet, command string, selection func(*action.Config) *action.Check) (*check.Report, *kube.Client, error) {
	client, err := r.cfg.Connect(ctx)
	if err != nil {
		return failedReport(command, r.cluster, fmt.Errorf("cannot reach it through context %s: %w", r.cluster.Context, err)), nil, err
	}
	chk := selection(r.cfg)
	opts := f.Spec(r.cluster)
	if command == "fleet verify" {
		if opts, err = a.verifiedSpec(ctx, f, r.cluster, r.primaryNamespace); err != nil {
			return failedReport(command, r.cluster, err), client, nil
		}
	}
	chk.Spec, chk.FailOn = &opts, a.FailOn
	res, err := chk.Run(ctx)
	if err != nil {
		return failedReport(command, r.cluster, fmt.Errorf("its checks could not run: %w", err)), client, nil
	}
	ew, ok := f.EastWest(r.cluster, r.revision)
	if command != "fleet verify" || !ok {
		return res.Report, client, nil
	}
	// The east-west gateway is an install of its own: verified as verify-install of it is.
	chk = selection(r.cfg)
	chk.Spec, chk.FailOn = &ew, a.FailOn
	gw, err := chk.Run(ctx)
	if err != nil {
		return failedReport(command, r.cluster, fmt.Errorf("the checks of its east-west gateway could not run: %w", err)), client, nil
	}
	gw.Report.Prefix("east-west gateway: ")
	return check.Join(command, res.Report, gw.Report), client, nil
}

func failedReport(command string, c *fleet.Cluster, err error) *check.Report {
	return check.Join(command, &check.Report{Results: []check.Result{{
		Check: unreachableCheck, Section: "Cluster", Severity: check.Error, Object: "Cluster/" + c.Name,
		Message: err.Error(), Hint: "check the context with kubectl --context " + c.Context + " version; the other clusters are checked all the same",
	}}, Summary: check.Summary{Checked: 1, Failed: 1, Errors: 1}})
}

// links checks the links the fleet makes (check's fleet-links).
func (a *Fleet) links(ctx context.Context, command string, f *fleet.Fleet, resolved map[string]*spec.Resolved, runs []*memberRun) *check.Report {
	client := map[string]*kube.Client{}
	for _, r := range runs {
		client[r.cluster.Name] = r.input.Client
	}
	fl := &check.FleetLinks{MeshID: f.MeshID, Name: f.Name, Clients: client, Verify: command == "fleet verify"}
	for _, l := range f.Links(func(c *fleet.Cluster) string { return fleet.Namespace(resolved[c.Name]) }) {
		fl.Links = append(fl.Links, check.FleetLink{Namespace: l.Secret.Namespace, Name: l.Secret.Name, Key: l.Key,
			Into: l.Into.Name, From: l.From.Name, Command: l.Command()})
	}
	env := &check.Env{FleetLinks: fl}
	return check.Run(ctx, command, check.Select(check.InFleetLinks), env)
}
