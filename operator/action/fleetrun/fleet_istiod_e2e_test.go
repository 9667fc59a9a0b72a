package fleetrun_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
)

// What the fleet tests read from the primaries' real istiods, never from istioctl: each
// istiod's /debug/clusterz and the certificate it serves, through istiod's Service (its
// cluster IP is in the bed's loopback service range; realistiod carries the connection to
// the ready istiod behind it, as kube-proxy would).

// syncedList is the clusterz a primary's istiod shows when it reads its own cluster and,
// synced, every remote Secret the fleet dump puts into it.
func (d *fleetDumped) syncedList(primary string) []string {
	want := []string{primary + "  synced"}
	for _, s := range d.linksInto(primary) {
		want = append(want, strings.TrimPrefix(s, "istio-system/istio-remote-secret-")+" "+s+" synced")
	}
	return want
}

// sameAsIstiod checks that remote-clusters in each primary says what its istiod lists.
func (b *fleetBed) sameAsIstiod(t *testing.T, primaries ...string) {
	t.Helper()
	for _, p := range primaries {
		harness.SameAsIstiod(t, b.member(p), b.remoteClusters(p).Rows)
	}
}

// fleetSignsWithRoot checks that c's istiod signs with ca: the certificate it serves on
// its secure xDS port (15012), which it issues itself, chains to ca's root through ca's
// intermediate; and the root it hands every namespace (istio-ca-root-cert) is ca's.
func fleetSignsWithRoot(t *testing.T, c *cluster.Cluster, ca *pki.CA) {
	t.Helper()
	addr, err := harness.IstiodAddr(c, 15012)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) // verified below, against ca
	if err != nil {
		t.Fatalf("%s's istiod at %s: %v", c.Context, addr, err)
	}
	certs := conn.ConnectionState().PeerCertificates
	conn.Close()
	roots, inter := x509.NewCertPool(), x509.NewCertPool()
	roots.AddCert(ca.Root)
	for _, cert := range certs[1:] {
		inter.AddCert(cert)
	}
	leaf := certs[0]
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: "istiod.istio-system.svc"}); err != nil {
		t.Errorf("%s's istiod serves a certificate that does not chain to the shared root: %v", c.Context, err)
	}
	if string(leaf.AuthorityKeyId) != string(ca.Intermediate.SubjectKeyId) {
		t.Errorf("%s's istiod's certificate is issued by %q, not by the shared intermediate", c.Context, leaf.Issuer)
	}
	fleetRootHanded(t, c, ca)
}

// fleetRootHanded waits until c's istio-ca-root-cert (written by the istiod that controls
// c) is ca's root.
func fleetRootHanded(t *testing.T, c *cluster.Cluster, ca *pki.CA) {
	t.Helper()
	harness.Eventually(t, 30*time.Second, c.Context+"'s istio-ca-root-cert is the shared root", func() (bool, string) {
		cm, err := c.Kube.CoreV1().ConfigMaps("default").Get(context.Background(), "istio-ca-root-cert", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cm.Data["root-cert.pem"] == string(ca.RootPEM), "it holds another root"
	})
}

// fleetWithTrust writes the fleet file at path, with spec.trust.cacerts made of ca, into a
// directory of its own, and returns the copy.
func fleetWithTrust(t *testing.T, path string, ca *pki.CA) string {
	t.Helper()
	return fleetEdited(t, path, "fleet.yaml", fleetCertFiles(ca, "certs"), func(spec map[string]any) {
		spec["trust"] = map[string]any{"cacerts": map[string]any{"dir": "certs"}}
	})
}

// fleetCertFiles are ca's cacerts files in dir.
func fleetCertFiles(ca *pki.CA, dir string) map[string][]byte {
	out := map[string][]byte{}
	for name, data := range ca.SecretData() {
		out[dir+"/"+name] = data
	}
	return out
}

// revokedLink revokes the tokens of the links to cluster-3 (their token Secrets deleted,
// as a user revoking them would) and restarts both primaries' istiods (their pods deleted,
// as a rollout does): istiod, which keeps its watches of a cluster it synced, meets the
// revoked token when it reads the Secret again. Each istiod must then report cluster-3
// timed out, remote-clusters and fleet verify a broken link; a fleet install rotates the
// credentials and the istiods sync again.
func (b *fleetBed) revokedLink(t *testing.T, file string, d *fleetDumped) {
	ctx := context.Background()
	c3 := b.member("cluster-3")
	tokens := map[string]string{}
	for _, p := range []string{"cluster-1", "cluster-2"} {
		s, err := b.member(p).Kube.CoreV1().Secrets("istio-system").Get(ctx, "istio-remote-secret-cluster-3", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tokens[p] = harness.LinkToken(t, s, "cluster-3")
	}
	if err := c3.Kube.CoreV1().Secrets("istio-system").DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: "install.istio.io/remote-secret-for"}); err != nil {
		t.Fatal(err)
	}
	for p, tok := range tokens {
		if !harness.Revoked(t, c3, tok) {
			t.Fatalf("%s's token for cluster-3 still authenticates with its token Secret deleted", p)
		}
	}
	var wg sync.WaitGroup
	old := map[string][]string{}
	for _, p := range []string{"cluster-1", "cluster-2"} {
		c := b.member(p)
		old[p] = harness.IstiodPods(t, c)
		if err := c.Kube.CoreV1().Pods("istio-system").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=istiod"}); err != nil {
			t.Fatal(err)
		}
		want := d.syncedList(p)
		for i, w := range want {
			if strings.HasPrefix(w, "cluster-3 ") {
				want[i] = strings.TrimSuffix(w, "synced") + "timeout"
			}
		}
		// istiod gives up on a cluster after PILOT_REMOTE_CLUSTER_TIMEOUT (30 s).
		wg.Go(func() {
			if err := harness.WaitIstiodLists(c, 90*time.Second, want...); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for p, before := range old {
		if now := harness.IstiodPods(t, b.member(p)); len(now) != 1 || slices.Contains(before, now[0]) {
			t.Errorf("%s's istiods %v, before the restart %v", p, now, before)
		}
	}
	if t.Failed() {
		return
	}
	b.sameAsIstiod(t, "cluster-1", "cluster-2")
	for _, p := range []string{"cluster-1", "cluster-2"} {
		res := b.remoteClusters(p)
		if !res.Broken {
			t.Errorf("remote-clusters in %s with its link to cluster-3 revoked: not broken", p)
		}
		fleetHolds(t, "remote-clusters in "+p, res.Report, true, fleetWant{"", "reports timeout"}, fleetWant{"", "rejects the credentials (401 Unauthorized)"})
	}
	res := b.verify("", file)
	if n := strings.Count(fleetFailures(res.Report), "reports timeout"); !res.Failed || n != 2 {
		t.Errorf("fleet verify with the links to cluster-3 revoked: failed %v, %d failures naming istiod's timeout, want 2\n%s", res.Failed, n, fleetFailures(res.Report))
	}
	repaired, _ := b.installed("repairing the links", file)
	fleetHas(t, "fleet install repairing the links", repaired, "istio-system/istio-remote-secret-cluster-3 cluster-1 cluster-3 rotated",
		"istio-system/istio-remote-secret-cluster-3 cluster-2 cluster-3 rotated")
	for _, p := range []string{"cluster-1", "cluster-2"} {
		harness.IstiodLists(t, b.member(p), 30*time.Second, d.syncedList(p)...)
	}
	b.verified("after the repair", file)
}

// fleetInjectsForRemote asks c's istiod, at the injection path a remote's webhooks call
// (/inject/cluster/<remote>/net/<network>), to inject a pod of the remote, as the remote's
// apiserver would through the east-west gateway (which the bed does not run: its address
// is never dialled). The call goes to istiod's Service, port 443, its certificate verified
// against ca's root. It checks that istiod injects the pod as one of the remote's.
func fleetInjectsForRemote(t *testing.T, c *cluster.Cluster, ca *pki.CA, remote, network string) {
	t.Helper()
	addr, err := harness.IstiodAddr(c, 443)
	if err != nil {
		t.Fatal(err)
	}
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"app","namespace":"default","labels":{"app":"app"}},` +
		`"spec":{"containers":[{"name":"app","image":"registry.example/app:1"}]}}`
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"0d5a3c1e-1b2f-4f6a-9b7c-2e4d6f8a0b1c",` +
		`"kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},` +
		`"namespace":"default","operation":"CREATE","object":` + pod + `}}`
	roots := x509.NewCertPool()
	roots.AddCert(ca.Root)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "istiod.istio-system.svc"}}}
	url := "https://" + addr + "/inject/cluster/" + remote + "/net/" + network
	resp, err := hc.Post(url, "application/json", strings.NewReader(review))
	if err != nil {
		t.Fatalf("%s's istiod at %s: %v", c.Context, url, err)
	}
	defer resp.Body.Close()
	var got struct {
		Response struct {
			Allowed bool
			Patch   []byte
			Result  *struct{ Message string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || !got.Response.Allowed {
		t.Fatalf("%s's istiod at %s: %s %v %+v", c.Context, url, resp.Status, err, got.Response.Result)
	}
	patch := string(got.Response.Patch)
	for _, want := range []string{`{"name":"ISTIO_META_CLUSTER_ID","value":"` + remote + `"}`, `{"name":"ISTIO_META_NETWORK","value":"` + network + `"}`,
		`"name":"istio-proxy"`, `"sidecar.istio.io/status"`} {
		if !strings.Contains(patch, want) {
			t.Errorf("%s's istiod injects a pod of %s without %s:\n%s", c.Context, remote, want, patch)
		}
	}
}

// fleetEveryEventInCluster checks the stream of a fleet run: every event but the last has
// its cluster, a done per cluster, the fleet's done last.
func fleetEveryEventInCluster(t *testing.T, evs []event.Event) {
	t.Helper()
	dones := map[string]int{}
	for i, e := range evs {
		if e.Cluster == "" && i != len(evs)-1 {
			t.Errorf("event %d has no cluster: %+v", i, e)
		}
		if e.Type == event.Done {
			dones[e.Cluster]++
		}
	}
	if want := map[string]int{"cluster-1": 1, "cluster-2": 1, "cluster-3": 1, "": 1}; !maps.Equal(dones, want) {
		t.Errorf("done events per cluster %v, want %v", dones, want)
	}
}
