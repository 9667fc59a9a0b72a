package check

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/kube"
)

// SectionCrossCluster holds the checks across the clusters of a mesh.
const SectionCrossCluster = "Across clusters"

// crossDocs: the cross-cluster checks' hints point at docs/fleet.md.
var crossDocs = documented{section: SectionCrossCluster, page: "fleet"}

// ClusterInput is what a cross-cluster check knows of one cluster of a mesh: its name and
// role in the fleet, the values its spec resolved to, and a client (nil when the cluster
// cannot be reached: a check that needs it says so for that cluster).
type ClusterInput struct {
	Name, Context, Role string
	// Primary is the cluster whose istiod serves a remote or config cluster.
	Primary string
	// ControlPlane says the cluster runs an istiod (a primary or an external cluster).
	ControlPlane   bool
	IstioNamespace string
	// Values are the resolved spec's values (values.global.meshID, ...).
	Values map[string]any
	Client *kube.Client
	// Unreachable is why Client is nil.
	Unreachable error
}

// CrossCheck is one check across the clusters of a mesh: a function of every cluster's
// inputs rather than of one cluster's Env.
type CrossCheck struct {
	ID, Title, Section string
	Severity           Severity
	Hint               string
	Run                func(ctx context.Context, clusters []ClusterInput) []Result
}

// CrossCluster is fleet precheck's selection of checks across clusters: what can be told
// from the clusters' resolved specs. Checks that read the clusters (one root of trust, the
// networks' gateways) join this list.
func CrossCluster() []CrossCheck {
	return []CrossCheck{
		crossDocs.cross("cross-cluster-names", "Every cluster has its own name", Error, "give each cluster a name of its own (values.global.multiCluster.clusterName; the fleet file's clusters[].name)", crossNames),
		crossDocs.cross("cross-mesh-id", "Every cluster has the mesh's one mesh ID", Error, "set one values.global.meshID in every cluster (the fleet file's spec.meshID)", crossMeshID),
		crossDocs.cross("cross-primaries", "Every remote's primary is a cluster of the mesh that runs istiod", Error, "name, as a remote's primary, a cluster of the fleet with role primary or external", crossPrimaries),
	}
}

// RunCross runs the cross-cluster checks as Run runs a selection: concurrently, failures
// first.
func RunCross(ctx context.Context, command string, checks []CrossCheck, clusters []ClusterInput) *Report {
	wrapped := make([]Check, len(checks))
	for i, c := range checks {
		wrapped[i] = Check{ID: c.ID, Title: c.Title, Section: c.Section, Severity: c.Severity, Hint: c.Hint,
			Run: func(ctx context.Context, _ *Env) []Result { return c.Run(ctx, clusters) }}
	}
	return Run(ctx, command, wrapped, &Env{})
}

func clusterObject(name string) string { return "Cluster/" + name }

func valueAt(values map[string]any, keys ...string) string {
	var cur any = values
	for _, k := range keys {
		m, _ := cur.(map[string]any)
		cur = m[k]
	}
	s, _ := cur.(string)
	return s
}

func crossNames(_ context.Context, clusters []ClusterInput) []Result {
	by := map[string][]string{}
	var out []Result
	for _, c := range clusters {
		if c.Role == "external" {
			continue // its istiod takes its config cluster's name
		}
		id := valueAt(c.Values, "global", "multiCluster", "clusterName")
		if id == "" || id == "Kubernetes" {
			out = append(out, Result{Object: clusterObject(c.Name), Message: fmt.Sprintf("has no cluster name of its own (values.global.multiCluster.clusterName is %q)", id)})
			continue
		}
		by[id] = append(by[id], c.Name)
	}
	ids := make([]string, 0, len(by))
	for id := range by {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if names := by[id]; len(names) > 1 {
			for _, n := range names {
				out = append(out, Result{Object: clusterObject(n), Message: fmt.Sprintf("cluster name %q is also the name of %s", id, strings.Join(others(names, n), ", "))})
			}
			continue
		}
		out = append(out, Result{Passed: true, Object: clusterObject(by[id][0]), Message: fmt.Sprintf("is named %q, no other cluster is", id)})
	}
	return out
}

func others(names []string, n string) []string {
	var out []string
	for _, o := range names {
		if o != n {
			out = append(out, o)
		}
	}
	return out
}

func crossMeshID(_ context.Context, clusters []ClusterInput) []Result {
	count := map[string]int{}
	for _, c := range clusters {
		count[valueAt(c.Values, "global", "meshID")]++
	}
	// The mesh's ID is the one most clusters have: the others are told to change.
	mesh, best := "", 0
	for id, n := range count {
		if n > best || (n == best && id < mesh) {
			mesh, best = id, n
		}
	}
	var out []Result
	for _, c := range clusters {
		id := valueAt(c.Values, "global", "meshID")
		switch {
		case id == "":
			out = append(out, Result{Object: clusterObject(c.Name), Message: "sets no mesh ID (values.global.meshID): its proxies take the trust domain instead"})
		case id != mesh:
			out = append(out, Result{Object: clusterObject(c.Name), Message: fmt.Sprintf("has mesh ID %q, the other clusters %q", id, mesh)})
		default:
			out = append(out, Result{Passed: true, Object: clusterObject(c.Name), Message: fmt.Sprintf("has mesh ID %q", id)})
		}
	}
	return out
}

func crossPrimaries(_ context.Context, clusters []ClusterInput) []Result {
	by := map[string]ClusterInput{}
	for _, c := range clusters {
		by[c.Name] = c
	}
	var out []Result
	for _, c := range clusters {
		if c.ControlPlane {
			continue
		}
		p, ok := by[c.Primary]
		switch {
		case !ok:
			out = append(out, Result{Object: clusterObject(c.Name), Message: fmt.Sprintf("its primary %q is not a cluster of the mesh", c.Primary)})
		case !p.ControlPlane:
			out = append(out, Result{Object: clusterObject(c.Name), Message: fmt.Sprintf("its primary %q runs no istiod (it is a %s)", c.Primary, p.Role)})
		default:
			out = append(out, Result{Passed: true, Object: clusterObject(c.Name), Message: fmt.Sprintf("is served by %s's istiod", c.Primary)})
		}
	}
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
	}
	return out
}
