package cmd_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
)

// TestFleetNetworksE2E: x fleet install of a multi-network fleet (west and east primaries
// on their own networks, edge a remote of west whose file gives no remotePilotAddress, one
// shared cacerts set) on the empty 3-cluster bed: each primary gets upstream's east-west
// gateway and expose objects, edge is installed with the address west's gateway got (its
// istiod EndpointSlice, its namespace annotation); fleet verify passes; a second run writes
// nothing; fleet uninstall --purge leaves no Istio.
func TestFleetNetworksE2E(t *testing.T) {
	bed := cluster.GetBed(t, 3)
	l := &linkBed{t: t, bed: bed, seen: &seen{allowed: map[int]bool{}, tokens: map[string]bool{}}}
	l.purgeBed()
	t.Cleanup(func() { l.purgeBed(); clearMeshMarks(t, bed) })
	ca := pki.New(t, pki.Valid)
	file := networksFleet(t, ca)
	dump := fleetDump(t, l, file)
	ctx := context.Background()
	west, east, edge := l.member("cluster-1"), l.member("cluster-2"), l.member("cluster-3")
	// Each primary's real istiod injects its east-west gateway's pods.

	t.Run("the prompt says what comes after each plan", func(t *testing.T) {
		out, errOut, err := harness.Asking(t, "n\n", "--kubeconfig", bed.Kubeconfig, "x", "fleet", "install", "-f", file)
		l.record(false, out, errOut)
		if err == nil {
			t.Fatalf("answering n: no error\n%s", out)
		}
		mustContain(t, "the prompt", out, "then its east-west gateway, the eastwest install (exposeIstiod, exposeServices)",
			"then its east-west gateway, the eastwest install (exposeServices)",
			"remotePilotAddress: the load balancer address west's east-west gateway gets, once it has one")
	})

	start := time.Now()
	out, code := l.fleet(bed.Kubeconfig, "install", "-f", file, "-y")
	if code != 0 {
		t.Fatalf("fleet install: exit %d\n%s", code, out)
	}
	t.Logf("fleet install of 2 networks: %v\n%s", time.Since(start), out)
	mustContain(t, "fleet install", out, "Fleet install complete (3 clusters, 4 links)")
	mustRows(t, "fleet install", out, "west primary installed", "east primary installed", "edge remote installed")

	t.Run("upstream's east-west gateways and expose objects", func(t *testing.T) {
		for c, ids := range map[*cluster.Cluster][]string{
			west: {"Service istio-system/istio-eastwestgateway istio=eastwestgateway,topology.istio.io/network=net-west",
				"Gateway istio-system/istiod-gateway ", "VirtualService istio-system/istiod-vs ", "Gateway istio-system/cross-network-gateway "},
			east: {"Service istio-system/istio-eastwestgateway istio=eastwestgateway,topology.istio.io/network=net-east",
				"Gateway istio-system/cross-network-gateway "},
		} {
			clear(discovered)
			for _, m := range missingObjects(t, c, ids) {
				t.Errorf("%s: %s", c.Context, m)
			}
		}
		clear(discovered)
		if m := missingObjects(t, east, []string{"Gateway istio-system/istiod-gateway "}); len(m) == 0 {
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
		addr := lbAddress(t, west, "istio-system", "istio-eastwestgateway")
		es, err := edge.Kube.DiscoveryV1().EndpointSlices("istio-system").Get(ctx, "istiod", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(es.Endpoints) != 1 || !slices.Equal(es.Endpoints[0].Addresses, []string{addr}) {
			t.Errorf("edge's istiod EndpointSlice has %+v, want west's gateway address %s", es.Endpoints, addr)
		}
		ns, err := edge.Kube.CoreV1().Namespaces().Get(ctx, "istio-system", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := ns.Annotations["topology.istio.io/controlPlaneClusters"]; got != "west" || ns.Labels["topology.istio.io/network"] != "net-west" {
			t.Errorf("edge's istio-system: controlPlaneClusters %q, network %q; want west, net-west", got, ns.Labels["topology.istio.io/network"])
		}
	})

	t.Run("fleet verify, and links as dumped", func(t *testing.T) {
		l := l.with(t)
		if out, code := l.fleet(bed.Kubeconfig, "verify", "-f", file); code != 0 {
			t.Fatalf("fleet verify: exit %d\n%s", code, out)
		}
		for _, c := range dump.Clusters {
			if got, want := linkSecrets(t, l.member(c.Context)), dump.linksInto(c.Name); !slices.Equal(got, want) {
				t.Errorf("%s holds the links %v, fleet dump lists %v", c.Name, got, want)
			}
		}
	})

	t.Run("a second install writes nothing", func(t *testing.T) {
		l := l.with(t)
		before := bedVersions(t, bed)
		out, code := l.fleet(bed.Kubeconfig, "install", "-f", file, "-y")
		if code != 0 {
			t.Fatalf("fleet install again: exit %d\n%s", code, out)
		}
		if diff := bedDiff(before, bedVersions(t, bed)); len(diff) > 0 {
			t.Errorf("a second fleet install changed:\n  %s\n%s", strings.Join(diff, "\n  "), out)
		}
		mustRows(t, "fleet install again", out, "west primary unchanged", "east primary unchanged", "edge remote unchanged")
	})

	t.Run("fleet uninstall --purge", func(t *testing.T) {
		l := l.with(t)
		out, code := l.fleet(bed.Kubeconfig, "uninstall", "-f", file, "-y", "--purge")
		if code != 0 || !strings.Contains(out, "Fleet uninstall complete") {
			t.Fatalf("fleet uninstall --purge: exit %d\n%s", code, out)
		}
		for _, c := range bed.Clusters {
			if got := linkSecrets(t, c); len(got) > 0 {
				t.Errorf("%s still holds the links %v", c.Context, got)
			}
			for _, name := range []string{"istiod", "istio-eastwestgateway"} {
				if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, name, metav1.GetOptions{}); err == nil {
					t.Errorf("%s still runs %s", c.Context, name)
				}
			}
			if _, err := c.Kube.CoreV1().Secrets("istio-system").Get(ctx, "cacerts", metav1.GetOptions{}); err == nil {
				t.Errorf("%s still holds cacerts after --purge", c.Context)
			}
		}
	})
}

// mustRows fails unless out has, for each row, a line whose fields begin with the row's
// (a table row whatever its column widths; its time column aside).
func mustRows(t *testing.T, what, out string, rows ...string) {
	t.Helper()
	for _, r := range rows {
		want := strings.Fields(r)
		found := false
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) >= len(want) && slices.Equal(f[:len(want)], want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s has no row %q:\n%s", what, r, out)
		}
	}
}

// networksFleet is operator/fleet/testdata/two-networks.yaml in a directory of its own,
// beside the certs/shared files it names, made of ca.
func networksFleet(t *testing.T, ca *pki.CA) string {
	t.Helper()
	b, err := os.ReadFile("../../operator/fleet/testdata/two-networks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certs := filepath.Join(dir, "certs", "shared")
	if err := os.MkdirAll(certs, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range ca.SecretData() {
		if err := os.WriteFile(filepath.Join(certs, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "fleet.yaml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
