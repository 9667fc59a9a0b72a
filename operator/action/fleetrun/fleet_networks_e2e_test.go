package fleetrun_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action/fleetrun"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
)

// TestFleetNetworksE2E: fleet install of a multi-network fleet (west and east primaries on
// their own networks, edge a remote of west whose file gives no remotePilotAddress, one
// shared cacerts set) on the empty 3-cluster bed: each primary gets upstream's east-west
// gateway and expose objects, edge is installed with the address west's gateway got (its
// istiod EndpointSlice, its namespace annotation); fleet verify passes; a second run writes
// nothing; fleet uninstall with Purge leaves no Istio.
func TestFleetNetworksE2E(t *testing.T) {
	b := newFleetBed(t)
	bed := b.bed
	t.Cleanup(func() { fleetClearMeshMarks(t, bed) })
	ca := pki.New(t, pki.Valid)
	file := fleetNetworks(t, ca)
	dump := fleetDumpOf(t, b, file)
	ctx := context.Background()
	west, east, edge := b.member("cluster-1"), b.member("cluster-2"), b.member("cluster-3")
	// Each primary's real istiod injects its east-west gateway's pods.

	t.Run("the plan says what comes after each cluster's install", func(t *testing.T) {
		p, err := (&fleetrun.Install{Fleet: b.with(t).fleet("", file), ReadinessTimeout: fleetReadiness, Replan: true}).Plan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		notes := map[string]string{}
		for _, m := range p.Members {
			notes[m.Name] = strings.Join(m.Notes, "\n")
		}
		for name, want := range map[string]string{
			"west": "then its east-west gateway, the eastwest install (exposeIstiod, exposeServices)",
			"east": "then its east-west gateway, the eastwest install (exposeServices)",
			"edge": "remotePilotAddress: the load balancer address west's east-west gateway gets, once it has one",
		} {
			if !strings.Contains(notes[name], want) {
				t.Errorf("%s's notes\n%s\nwant %q", name, notes[name], want)
			}
		}
	})

	start := time.Now()
	res, _ := b.installed("of 2 networks", file)
	t.Logf("fleet install of 2 networks: %v", time.Since(start))
	fleetHas(t, "fleet install", res, "west primary installed", "east primary installed", "edge remote installed")
	if len(res.Clusters) != 3 || len(res.Links) != 4 {
		t.Errorf("fleet install: %d clusters, %d links, want 3 and 4", len(res.Clusters), len(res.Links))
	}

	t.Run("upstream's east-west gateways and expose objects", func(t *testing.T) {
		for c, ids := range map[*cluster.Cluster][]string{
			west: {"Service istio-system/istio-eastwestgateway istio=eastwestgateway,topology.istio.io/network=net-west",
				"Gateway istio-system/istiod-gateway ", "VirtualService istio-system/istiod-vs ", "Gateway istio-system/cross-network-gateway "},
			east: {"Service istio-system/istio-eastwestgateway istio=eastwestgateway,topology.istio.io/network=net-east",
				"Gateway istio-system/cross-network-gateway "},
		} {
			for _, m := range fleetMissingObjects(t, c, ids) {
				t.Errorf("%s: %s", c.Context, m)
			}
		}
		if m := fleetMissingObjects(t, east, []string{"Gateway istio-system/istiod-gateway "}); len(m) == 0 {
			t.Errorf("east exposes its istiod, which no remote of it needs")
		}
	})

	t.Run("the file's cacerts in every cluster", func(t *testing.T) {
		for _, c := range bed.Clusters {
			s, err := c.Kube.CoreV1().Secrets("istio-system").Get(ctx, "cacerts", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("%s: %v", c.Context, err)
			}
			if !bytes.Equal(s.Data["root-cert.pem"], ca.RootPEM) || !bytes.Equal(s.Data["ca-key.pem"], ca.KeyPEM) {
				t.Errorf("%s: cacerts is not the file's", c.Context)
			}
		}
	})

	t.Run("the remote reaches west's istiod at its gateway's address", func(t *testing.T) {
		addr := fleetLBAddress(t, west, "istio-system", "istio-eastwestgateway")
		es, err := edge.Kube.DiscoveryV1().EndpointSlices("istio-system").Get(ctx, "istiod", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(es.Endpoints) != 1 || !slices.Equal(es.Endpoints[0].Addresses, []string{addr}) {
			t.Errorf("edge's istiod EndpointSlice has %+v, want west's gateway address %s", es.Endpoints, addr)
		}
		fleetControlledBy(t, edge, "west", "net-west")
	})

	t.Run("fleet verify, and links as dumped", func(t *testing.T) {
		b := b.with(t)
		b.verified("", file)
		dump.linksAsDumped(t, b)
	})

	t.Run("a second install writes nothing", func(t *testing.T) {
		b := b.with(t)
		before := b.versions()
		res, _ := b.installed("again", file)
		if diff := fleetBedDiff(before, b.versions(), true); len(diff) > 0 {
			t.Errorf("a second fleet install changed:\n  %s", strings.Join(diff, "\n  "))
		}
		fleetHas(t, "fleet install again", res, "west primary unchanged", "east primary unchanged", "edge remote unchanged")
	})

	t.Run("fleet uninstall with Purge", func(t *testing.T) {
		b := b.with(t)
		res := b.uninstalled(file, true)
		fleetHas(t, "fleet uninstall", res, "west primary removed", "east primary removed", "edge remote removed")
		for _, c := range bed.Clusters {
			if got := fleetLinkSecrets(t, c); len(got) > 0 {
				t.Errorf("%s still holds the links %v", c.Context, got)
			}
			for _, name := range []string{"istiod", "istio-eastwestgateway"} {
				if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, name, metav1.GetOptions{}); err == nil {
					t.Errorf("%s still runs %s", c.Context, name)
				}
			}
			if _, err := c.Kube.CoreV1().Secrets("istio-system").Get(ctx, "cacerts", metav1.GetOptions{}); err == nil {
				t.Errorf("%s still holds cacerts after the purge", c.Context)
			}
		}
	})
}

// fleetNetworks is operator/fleet/testdata/two-networks.yaml in a directory of its own,
// beside the certs/shared files it names, made of ca.
func fleetNetworks(t *testing.T, ca *pki.CA) string {
	t.Helper()
	return fleetEdited(t, "../../fleet/testdata/two-networks.yaml", "fleet.yaml", fleetCertFiles(ca, "certs/shared"), func(map[string]any) {})
}
