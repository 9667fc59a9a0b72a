package check

import (
	"context"
	"sync"

	"github.com/istioctl-installer/istioctl/operator/kube"
)

// SectionCrossCluster holds the checks across the clusters of a mesh.
const SectionCrossCluster = "Across clusters"

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

// RunCross reads every cluster once (concurrently), then runs the checks as Run runs a
// selection: concurrently, failures first.
func RunCross(ctx context.Context, command string, checks []Check, clusters []ClusterInput) *Report {
	return runFacts(ctx, command, checks, Gather(ctx, clusters))
}

// runFacts runs the checks over clusters already read.
func runFacts(ctx context.Context, command string, checks []Check, facts []ClusterFacts) *Report {
	wrapped := make([]Check, len(checks))
	for i, c := range checks {
		c.Run = func(context.Context, *Env) []Result { return c.Cross(facts) }
		wrapped[i] = c
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
