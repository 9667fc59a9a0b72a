package fleetrun_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
)

// The walkthrough of docs/multicluster.md, from the repository's root: each install's spec
// and the east-west gateways' sets.
const fleetMeshDir = "testdata/multicluster/mesh/"

var (
	fleetEastWest1 = []string{"profile=eastwest", "values.global.network=net1", "eastWest.exposeIstiod=true", "eastWest.exposeServices=true"}
	fleetEastWest2 = []string{"profile=eastwest", "values.global.network=net2", "eastWest.exposeServices=true"}
)

// TestMulticlusterE2E: multi-primary multi-network cluster-1 (net1) and cluster-2 (net2),
// and cluster-3 a remote of cluster-1 on net1, installed with the single-cluster actions as
// docs/multicluster.md says, step by step; every object upstream's steps create exists with
// upstream's names and labels; remote-clusters and verify-install pass everywhere; the
// istio namespace that existed (for cacerts) has the network label, and re-installing
// writes nothing; precheck with remote contexts names each disagreement between the
// clusters, and fleet precheck fails the same checks.
func TestMulticlusterE2E(t *testing.T) {
	start := time.Now()
	b := newFleetBed(t)
	t.Chdir("../../..") // the walkthrough's files are relative to the repo root
	t.Cleanup(func() { fleetClearMeshMarks(t, b.bed) })
	ctx := context.Background()
	c1, c2, c3 := b.member("cluster-1"), b.member("cluster-2"), b.member("cluster-3")
	mesh := func(name string, sets ...string) spec.Options {
		return spec.Options{Files: []string{fleetMeshDir + name + ".yaml"}, Sets: sets}
	}

	// Step 0: one root, a cacerts Secret in each primary's istio-system, made before the
	// install (which is why upstream's install misses the network label).
	ca := pki.New(t, pki.Valid)
	for _, c := range []*cluster.Cluster{c1, c2} {
		fleetPutCACerts(t, c, ca)
	}

	t.Run("the expose objects wait for the control plane", func(t *testing.T) {
		// cluster-3 has no Istio yet: no CRDs, no istiod. Nothing of the gateway's stage is applied.
		in := &action.Install{Config: b.with(t).config("", "cluster-3"), ReadinessTimeout: 3 * time.Second,
			Spec: spec.Options{Sets: []string{"profile=eastwest", "values.global.network=net1", "eastWest.exposeServices=true"}}}
		if _, err := in.Run(ctx, nil); err == nil || !strings.Contains(err.Error(), "install the control plane first") {
			t.Errorf("the gateway's install without a control plane: %v, want it refused saying to install the control plane first", err)
		}
		if _, err := c3.Kube.CoreV1().Services("istio-system").Get(ctx, "istio-eastwestgateway", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the gateway's Service was applied before its Istio objects could be (err %v)", err)
		}
	})

	// Step 1: the primaries.
	b.mustInstallSpec("cluster-1", mesh("cluster-1"))
	b.mustInstallSpec("cluster-2", mesh("cluster-2"))
	t.Logf("primaries installed at %v", time.Since(start))

	t.Run("network label on an existing namespace", func(t *testing.T) {
		for c, want := range map[*cluster.Cluster]string{c1: "net1", c2: "net2"} {
			ns, err := c.Kube.CoreV1().Namespaces().Get(ctx, "istio-system", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := ns.Labels["topology.istio.io/network"]; got != want {
				t.Errorf("%s: istio-system's topology.istio.io/network is %q, want %q", c.Context, got, want)
			}
		}
	})

	t.Run("a re-install writes nothing", func(t *testing.T) {
		ids := append(fleetUpstream(t, "cluster-1"), "Namespace /istio-system")
		before := fleetVersionsOf(t, c1, ids)
		b.with(t).mustInstallSpec("cluster-1", mesh("cluster-1"))
		after := fleetVersionsOf(t, c1, ids)
		for k, v := range before {
			if after[k] != v {
				t.Errorf("re-install wrote %s: resourceVersion %s -> %s", k, v, after[k])
			}
		}
		if len(before) < 30 {
			t.Errorf("compared %d objects only", len(before))
		}
	})

	// Step 2: the east-west gateways (injected by each primary's real istiod), cluster-1's
	// exposing istiod too, for the remote.
	b.mustInstallSpec("cluster-1", spec.Options{Sets: fleetEastWest1})
	b.mustInstallSpec("cluster-2", spec.Options{Sets: fleetEastWest2})
	t.Logf("east-west gateways installed at %v", time.Since(start))

	// Step 3: the remote, pointed at cluster-1's east-west gateway (its address is never
	// dialled: the bed's load balancer addresses are 192.0.2.x).
	addr := fleetLBAddress(t, c1, "istio-system", "istio-eastwestgateway")
	remote := mesh("cluster-3", "values.global.remotePilotAddress="+addr, "external.remote.controlPlaneClusters=cluster-1")
	b.mustInstallSpec("cluster-3", remote)
	t.Logf("remote installed at %v", time.Since(start))
	fleetControlledBy(t, c3, "cluster-1", "net1")

	// Step 4: the links: both ways between the primaries, primary to remote.
	b.link("cluster-2", "cluster-2", "cluster-1")
	b.link("cluster-1", "cluster-1", "cluster-2")
	b.link("cluster-3", "cluster-3", "cluster-1")
	t.Logf("linked at %v", time.Since(start))

	t.Run("upstream's objects", func(t *testing.T) {
		for _, tc := range []struct {
			c    *cluster.Cluster
			name string
			// from, to rewrite upstream's recorded case for this cluster (its network)
			from, to string
		}{
			{c1, "cluster-1", "", ""}, {c2, "cluster-2", "", ""}, {c3, "cluster-3", "", ""},
			{c1, "eastwest-net1", "", ""}, {c2, "eastwest-net1", "net1", "net2"},
		} {
			want := fleetUpstream(t, tc.name)
			if tc.from != "" {
				for i := range want {
					want[i] = strings.ReplaceAll(want[i], tc.from, tc.to)
				}
			}
			for _, m := range fleetMissingObjects(t, tc.c, want) {
				t.Errorf("%s: upstream's %s creates %s, not found with those labels", tc.c.Context, tc.name, m)
			}
		}
		// The samples' objects: expose-istiod and expose-services in cluster-1, expose-services
		// in cluster-2.
		for c, names := range map[*cluster.Cluster][]string{
			c1: {"Gateway istio-system/istiod-gateway ", "VirtualService istio-system/istiod-vs ", "Gateway istio-system/cross-network-gateway "},
			c2: {"Gateway istio-system/cross-network-gateway "},
		} {
			for _, m := range fleetMissingObjects(t, c, names) {
				t.Errorf("%s: upstream's samples/multicluster create %s, not found", c.Context, m)
			}
		}
	})

	t.Run("remote-clusters and verify-install pass", func(t *testing.T) {
		b := b.with(t)
		for ctx, want := range map[string][]string{"cluster-1": {"istio-remote-secret-cluster-2", "istio-remote-secret-cluster-3"},
			"cluster-2": {"istio-remote-secret-cluster-1"}, "cluster-3": nil} {
			res := b.remoteClusters(ctx)
			var secrets []string
			for _, r := range res.Rows {
				secrets = append(secrets, r.Secret)
			}
			if res.Broken {
				t.Errorf("remote-clusters in %s: broken\n%s", ctx, fleetFailures(res.Report))
			}
			for _, w := range want {
				if !slices.ContainsFunc(secrets, func(s string) bool { return strings.HasSuffix(s, w) }) {
					t.Errorf("remote-clusters in %s lists %v, want %s", ctx, secrets, w)
				}
			}
		}
		b.verifySpec("cluster-1", mesh("cluster-1"))
		b.verifySpec("cluster-1", spec.Options{Sets: fleetEastWest1})
		b.verifySpec("cluster-2", mesh("cluster-2"))
		b.verifySpec("cluster-2", spec.Options{Sets: fleetEastWest2})
		b.verifySpec("cluster-3", remote)
	})

	t.Run("precheck across clusters", func(t *testing.T) {
		b := b.with(t)
		pre := func(sets ...string) *action.CheckResult {
			chk := action.Precheck(b.config("", "cluster-1"))
			opts := mesh("cluster-1", sets...)
			chk.Spec, chk.RemoteContexts = &opts, []string{"cluster-2", "cluster-3"}
			return b.checked(chk.Run)
		}
		res := pre()
		if res.Failed {
			t.Fatalf("precheck of the walkthrough's mesh fails:\n%s", fleetFailures(res.Report))
		}
		fleetHolds(t, "precheck of the walkthrough's mesh", res.Report, false, fleetWant{"", `every cluster has mesh ID "mesh1"`},
			fleetWant{"", "every istiod signs under one root"}, fleetWant{"", `network "net2" has an east-west gateway in cluster-2`}, fleetWant{"", "a loopback address"})
		for _, tc := range []struct {
			name string
			set  string
			want string
		}{
			{"two clusters with one name", "values.global.multiCluster.clusterName=cluster-2", `all have cluster name "cluster-2"`},
			{"a cluster named Kubernetes", "values.global.multiCluster.clusterName=Kubernetes", "cluster name is Kubernetes, the charts' default"},
			{"two mesh IDs", "values.global.meshID=mesh2", `the clusters have 2 mesh IDs: "mesh1" in cluster-2, cluster-3; "mesh2" in cluster-1`},
			{"a network with no gateway", "values.global.network=net3", `network "net3" has no east-west gateway`},
		} {
			res := pre(tc.set)
			if !res.Failed {
				t.Errorf("%s: precheck passes", tc.name)
			}
			fleetHolds(t, tc.name, res.Report, true, fleetWant{"", tc.want})
		}
		fleetPutCACerts(t, c2, pki.New(t, pki.Valid))
		res = pre()
		if !res.Failed {
			t.Errorf("precheck passes with cluster-2's cacerts of another root")
		}
		fleetHolds(t, "two roots", res.Report, true, fleetWant{"", "the cacerts roots differ"})

		// fleet precheck runs the same registry: on the same mesh, with cluster-2's root
		// still a different one and a network without a gateway, it fails the same checks.
		t.Run("fleet precheck fails the same checks", func(t *testing.T) {
			b := b.with(t)
			single := fleetCross(t, pre("values.global.network=net3"))
			file := filepath.Join(t.TempDir(), "fleet.yaml")
			if err := os.WriteFile(file, []byte(fmt.Sprintf(fleetMeshFile, addr)), 0o600); err != nil {
				t.Fatal(err)
			}
			fleet := fleetCross(t, b.precheck("", file))
			for _, id := range []string{"mesh-trust", "mesh-network"} {
				if !single.failed[id] || !fleet.failed[id] {
					t.Errorf("%s: precheck with remote contexts failed %v, fleet precheck %v; want it failed in both", id, single.failed, fleet.failed)
				}
			}
			for _, want := range []string{"the cacerts roots differ", `network "net3" has no east-west gateway`} {
				if !slices.ContainsFunc(fleet.messages, func(m string) bool { return strings.Contains(m, want) }) {
					t.Errorf("fleet precheck's failures %q, want one saying %q", fleet.messages, want)
				}
			}
			for id := range single.ran {
				if !fleet.ran[id] {
					t.Errorf("precheck with remote contexts ran %s, fleet precheck did not (it ran %v)", id, fleet.ran)
				}
			}
			if !maps.Equal(single.failed, fleet.failed) {
				t.Errorf("failed checks differ: precheck with remote contexts %v, fleet precheck %v", single.failed, fleet.failed)
			}
		})
		fleetPutCACerts(t, c2, ca)
	})
	t.Logf("done at %v", time.Since(start))
}

// fleetMeshFile is the walkthrough's mesh as a fleet file (%s: cluster-1's east-west
// gateway address), but with the remote cluster-3 on a network of its own, net3: a remote
// gets no east-west gateway from the fleet, so nothing reaches net3.
const fleetMeshFile = `apiVersion: fleet.istioctl-installer.github.io/v1alpha1
kind: Fleet
metadata:
  name: walkthrough
spec:
  meshID: mesh1
  istioOperator:
    profile: default
  clusters:
  - {name: cluster-1, context: cluster-1, network: net1, role: primary}
  - {name: cluster-2, context: cluster-2, network: net2, role: primary}
  - {name: cluster-3, context: cluster-3, network: net3, role: remote, primary: cluster-1, remotePilotAddress: %s}
`

// fleetCrossRun is what a failed check report says of its cross-cluster section: the
// checks that ran, those that failed, the failures' messages.
type fleetCrossRun struct {
	ran, failed map[string]bool
	messages    []string
}

func fleetCross(t *testing.T, res *action.CheckResult) fleetCrossRun {
	t.Helper()
	if !res.Failed {
		t.Fatalf("the checks pass, want them failed:\n%s", fleetLines(res.Report, false))
	}
	r := fleetCrossRun{ran: map[string]bool{}, failed: map[string]bool{}}
	for _, res := range res.Report.Results {
		if res.Section != check.SectionCrossCluster {
			continue
		}
		r.ran[res.Check] = true
		if !res.Passed {
			r.failed[res.Check] = true
			r.messages = append(r.messages, res.Message)
		}
	}
	return r
}
