package check

import (
	"context"
	"sync"

	"github.com/istioctl-installer/istioctl/operator/kube"
)

// SectionCrossCluster holds the checks across the clusters of a mesh.
const SectionCrossCluster = "Across clusters"

// crossDocs: the cross-cluster checks' hints point at docs/multicluster.md, one anchor per
// check.
var crossDocs = documented{section: SectionCrossCluster, page: "multicluster"}

// ClusterInput is one cluster of a mesh as the cross-cluster checks take it: precheck
// --remote-contexts gives the cluster being installed (Declared) and each remote context
// (read from its control plane); a fleet gives each of its clusters, declared by the file.
type ClusterInput struct {
	// Name names it in results: the fleet's cluster name, or the kubeconfig context.
	Name, Context string
	// Role and Primary are the fleet's (primary, remote, config, external; the cluster
	// whose istiod serves a remote); "" outside a fleet, where no primaries are checked.
	Role, Primary string
	// ControlPlane says the cluster runs an istiod (a primary or an external cluster).
	ControlPlane bool
	// IstioNamespace is where its control plane lives (default istio-system).
	IstioNamespace string
	// Declared holds what a spec about to be installed there says; nil: read from the
	// cluster (the values ConfigMap istiod's chart writes).
	Declared *MeshValues
	// Client is nil when the cluster cannot be reached; Unreachable says why.
	Client      *kube.Client
	Unreachable error
}

// CrossCheck is one check across the clusters of a mesh: a function of every cluster's
// facts (read once per run) rather than of one cluster's Env.
type CrossCheck struct {
	ID, Title, Section string
	Severity           Severity
	Hint               string
	Run                func(clusters []ClusterFacts) []Result
}

// cross is one of the section's cross-cluster checks.
func (d documented) cross(id, title string, sev Severity, hint string, run func([]ClusterFacts) []Result) CrossCheck {
	return CrossCheck{ID: id, Title: title, Section: d.section, Severity: sev, Hint: d.hint(id, hint), Run: run}
}

// CrossCluster is the one registry of checks across the clusters of a mesh: precheck
// --remote-contexts and fleet precheck and verify run all of it.
func CrossCluster() []CrossCheck {
	return []CrossCheck{
		crossDocs.cross("mesh-read", "Every cluster of the mesh can be read", Error,
			"check the context with kubectl --context CONTEXT version", crossRead),
		crossDocs.cross("mesh-cluster-name", "Every cluster has a name of its own", Error,
			"give each cluster a DNS-1123 name of its own (values.global.multiCluster.clusterName; the fleet file's clusters[].name)", crossNames),
		crossDocs.cross("mesh-id", "Every cluster has the mesh's one mesh ID", Error,
			"set one values.global.meshID in every cluster (the fleet file's spec.meshID)", crossMeshID),
		crossDocs.cross("mesh-primaries", "Every remote's primary is a cluster of the mesh that runs istiod", Error,
			"name, as a remote's primary, a cluster of the fleet with role primary or external", crossPrimaries),
		crossDocs.cross("mesh-network", "Every network of the mesh is reachable through an east-west gateway", Error,
			"label the istio namespace and gateways with the cluster's network, and give every network an east-west gateway", crossNetworks),
		crossDocs.cross("mesh-trust", "Every istiod signs under one root", Error,
			"plug in a cacerts Secret with one root-cert.pem in every cluster that runs istiod, or declare a shared CA (spec.external.ca)", crossTrust),
		crossDocs.cross("mesh-link-server", "Every link reaches its cluster at an address other clusters can reach", Warning,
			"give create-remote-secret --server an address the other cluster's pods can reach", crossLinkServers),
	}
}

// RunCross reads every cluster once (concurrently), then runs the checks as Run runs a
// selection: concurrently, failures first.
func RunCross(ctx context.Context, command string, checks []CrossCheck, clusters []ClusterInput) *Report {
	return runFacts(ctx, command, checks, Gather(ctx, clusters))
}

// runFacts runs the checks over clusters already read.
func runFacts(ctx context.Context, command string, checks []CrossCheck, facts []ClusterFacts) *Report {
	wrapped := make([]Check, len(checks))
	for i, c := range checks {
		wrapped[i] = Check{ID: c.ID, Title: c.Title, Section: c.Section, Severity: c.Severity, Hint: c.Hint,
			Run: func(context.Context, *Env) []Result { return c.Run(facts) }}
	}
	return Run(ctx, command, wrapped, &Env{})
}

// Gather reads what the cross-cluster checks compare of each cluster, in parallel; a
// cluster that cannot be read keeps what its spec declares and its error.
func Gather(ctx context.Context, clusters []ClusterInput) []ClusterFacts {
	out := make([]ClusterFacts, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = readMember(ctx, c)
		}()
	}
	wg.Wait()
	return out
}

// Join joins reports keeping their order (a fleet's report: one cluster after another)
// and sums them up.
func Join(command string, reports ...*Report) *Report {
	out := &Report{Command: command, Results: []Result{}}
	for _, r := range reports {
		out.Results = append(out.Results, r.Results...)
		out.Summary.Checked += r.Summary.Checked
		out.Summary.Failed += r.Summary.Failed
		out.Summary.Errors += r.Summary.Errors
		out.Summary.Warnings += r.Summary.Warnings
		out.Summary.Notes += r.Summary.Notes
	}
	return out
}
