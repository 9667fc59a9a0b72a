package cmd_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
)

// What the fleet tests read from the primaries' real istiods, never from istioctl: each
// istiod's /debug/clusterz and the certificate it serves, through istiod's Service (its
// cluster IP is in the bed's loopback service range; realistiod carries the connection to
// the ready istiod behind it, as kube-proxy would).

// istiodCluster is one entry of istiod's /debug/clusterz (upstream's cluster.DebugInfo).
type istiodCluster struct {
	ID         string `json:"id"`
	SecretName string `json:"secretName"`
	SyncStatus string `json:"syncStatus"`
}

// istiodAddr is host:port of istiod's Service in c's istio-system.
func istiodAddr(c *cluster.Cluster, port int) (string, error) {
	svc, err := c.Kube.CoreV1().Services("istio-system").Get(context.Background(), "istiod", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(port)), nil
}

// clusterz is what c's istiod lists at /debug/clusterz, one "id secret status" line per
// cluster, sorted.
func clusterz(c *cluster.Cluster) ([]string, error) {
	addr, err := istiodAddr(c, 15014)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: 3 * time.Second}
	resp, err := hc.Get("http://" + addr + "/debug/clusterz")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /debug/clusterz: %s %v", resp.Status, err)
	}
	var list []istiodCluster
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("/debug/clusterz: %w: %s", err, body)
	}
	var out []string
	for _, e := range list {
		out = append(out, strings.Join([]string{e.ID, e.SecretName, e.SyncStatus}, " "))
	}
	sort.Strings(out)
	return out, nil
}

// istiodLists waits until c's istiod lists exactly want (clusterz's lines).
func istiodLists(t *testing.T, c *cluster.Cluster, timeout time.Duration, want ...string) {
	t.Helper()
	if err := waitIstiodLists(c, timeout, want...); err != nil {
		t.Fatal(err)
	}
}

// waitIstiodLists is istiodLists for any goroutine: the error says what istiod listed last.
func waitIstiodLists(c *cluster.Cluster, timeout time.Duration, want ...string) error {
	sort.Strings(want)
	err := harness.Within(timeout, 250*time.Millisecond, func() (bool, string) {
		got, err := clusterz(c)
		return err == nil && slices.Equal(got, want), fmt.Sprintf("it lists %q (%v)", got, err)
	})
	if err != nil {
		return fmt.Errorf("%s's istiod does not list %q: %v", c.Context, want, err)
	}
	return nil
}

// syncedList is the clusterz a primary's istiod shows when it reads its own cluster and,
// synced, every remote Secret the fleet dump puts into it.
func syncedList(d *fleetDumped, primary string) []string {
	want := []string{primary + "  synced"}
	for _, s := range d.linksInto(primary) {
		want = append(want, strings.TrimPrefix(s, "istio-system/istio-remote-secret-")+" "+s+" synced")
	}
	return want
}

// remoteClustersRows are the rows remote-clusters -o json prints in ctx, each "name secret
// status", sorted, and the istiod pods it names; its exit code.
func remoteClustersRows(l *linkBed, ctx string) ([]string, []string, int) {
	l.t.Helper()
	out, errOut, code := l.istioctl(ctx, "remote-clusters", "-o", "json")
	var got struct {
		Clusters []struct{ Name, Secret, Status, Istiod string }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		l.t.Fatalf("remote-clusters -o json in %s: %v\n%s\n%s", ctx, err, out, errOut)
	}
	var rows, pods []string
	for _, r := range got.Clusters {
		rows = append(rows, strings.Join([]string{r.Name, r.Secret, r.Status}, " "))
		if !slices.Contains(pods, r.Istiod) {
			pods = append(pods, r.Istiod)
		}
	}
	sort.Strings(rows)
	return rows, pods, code
}

// istiodPods are the running istiod pods of c's istio-system.
func istiodPods(t *testing.T, c *cluster.Cluster) []string {
	t.Helper()
	list, err := c.Kube.CoreV1().Pods("istio-system").List(context.Background(), metav1.ListOptions{LabelSelector: "app=istiod"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == "Running" {
			out = append(out, p.Name)
		}
	}
	return out
}

// sameAsIstiod checks that remote-clusters in each primary prints what its istiod lists,
// naming the istiod pod that runs.
func sameAsIstiod(t *testing.T, l *linkBed, primaries ...string) {
	t.Helper()
	for _, p := range primaries {
		want, err := clusterz(l.member(p))
		if err != nil {
			t.Fatalf("%s's istiod: %v", p, err)
		}
		rows, pods, _ := remoteClustersRows(l, p)
		if !slices.Equal(rows, want) {
			t.Errorf("remote-clusters in %s prints\n  %s\nits istiod lists\n  %s", p, strings.Join(rows, "\n  "), strings.Join(want, "\n  "))
		}
		if running := istiodPods(t, l.member(p)); !slices.Equal(pods, running) {
			t.Errorf("remote-clusters in %s names the istiods %v, the running ones are %v", p, pods, running)
		}
	}
}

// signsWithRoot checks that c's istiod signs with ca: the certificate it serves on its
// secure xDS port (15012), which it issues itself, chains to ca's root through ca's
// intermediate; and the root it hands every namespace (istio-ca-root-cert) is ca's.
func signsWithRoot(t *testing.T, c *cluster.Cluster, ca *pki.CA) {
	t.Helper()
	addr, err := istiodAddr(c, 15012)
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
	harness.Eventually(t, 30*time.Second, c.Context+"'s istio-ca-root-cert is the shared root", func() (bool, string) {
		cm, err := c.Kube.CoreV1().ConfigMaps("default").Get(context.Background(), "istio-ca-root-cert", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cm.Data["root-cert.pem"] == string(ca.RootPEM), "it holds another root"
	})
}

// withTrust writes the fleet file at path, with spec.trust.cacerts made of ca, into a
// directory of its own, and returns the copy.
func withTrust(t *testing.T, path string, ca *pki.CA) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	f["spec"].(map[string]any)["trust"] = map[string]any{"cacerts": map[string]any{"dir": "certs"}}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "certs"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range ca.SecretData() {
		if err := os.WriteFile(filepath.Join(dir, "certs", name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, err := yaml.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "fleet.yaml")
	if err := os.WriteFile(file, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// revokedLink revokes the tokens of the links to cluster-3 (their token Secrets deleted,
// as a user revoking them would) and restarts both primaries' istiods (their pods deleted,
// as a rollout does): istiod, which keeps its watches of a cluster it synced, meets the
// revoked token when it reads the Secret again. Each istiod must then report cluster-3
// timed out, remote-clusters and fleet verify a broken link; a fleet install rotates the
// credentials and the istiods sync again.
func revokedLink(t *testing.T, l *linkBed, file string, d *fleetDumped) {
	ctx := context.Background()
	c3 := l.member("cluster-3")
	tokens := map[string]string{}
	for _, p := range []string{"cluster-1", "cluster-2"} {
		tokens[p] = tokenOf(t, l.linkSecret(p, "istio-remote-secret-cluster-3"), "cluster-3")
	}
	if err := c3.Kube.CoreV1().Secrets("istio-system").DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: "install.istio.io/remote-secret-for"}); err != nil {
		t.Fatal(err)
	}
	for p, tok := range tokens {
		if !revoked(t, c3, tok) {
			t.Fatalf("%s's token for cluster-3 still authenticates with its token Secret deleted", p)
		}
	}
	var wg sync.WaitGroup
	old := map[string][]string{}
	for _, p := range []string{"cluster-1", "cluster-2"} {
		c := l.member(p)
		old[p] = istiodPods(t, c)
		if err := c.Kube.CoreV1().Pods("istio-system").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=istiod"}); err != nil {
			t.Fatal(err)
		}
		want := syncedList(d, p)
		for i, w := range want {
			if strings.HasPrefix(w, "cluster-3 ") {
				want[i] = strings.TrimSuffix(w, "synced") + "timeout"
			}
		}
		// istiod gives up on a cluster after PILOT_REMOTE_CLUSTER_TIMEOUT (30 s).
		wg.Go(func() {
			if err := waitIstiodLists(c, 90*time.Second, want...); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for p, before := range old {
		if now := istiodPods(t, l.member(p)); len(now) != 1 || slices.Contains(before, now[0]) {
			t.Errorf("%s's istiods %v, before the restart %v", p, now, before)
		}
	}
	if t.Failed() {
		return
	}
	sameAsIstiod(t, l, "cluster-1", "cluster-2")
	for _, p := range []string{"cluster-1", "cluster-2"} {
		out, errOut, code := l.istioctl(p, "remote-clusters")
		if code != 1 || !strings.Contains(out, "reports timeout") || !strings.Contains(out, "rejects the credentials (401 Unauthorized)") {
			t.Errorf("remote-clusters in %s with its link to cluster-3 revoked: exit %d, want 1 naming istiod's timeout and the 401\n%s\n%s", p, code, out, errOut)
		}
	}
	out, code := l.fleet(l.bed.Kubeconfig, "verify", "-f", file)
	if code != 1 || strings.Count(out, "reports timeout") != 2 {
		t.Errorf("fleet verify with the links to cluster-3 revoked: exit %d, want 1 naming istiod's timeout\n%s", code, out)
	}
	out, code = l.fleet(l.bed.Kubeconfig, "install", "-f", file, "-y")
	if code != 0 {
		t.Fatalf("fleet install repairing the links: exit %d\n%s", code, out)
	}
	mustRows(t, "fleet install repairing the links", out, "istio-system/istio-remote-secret-cluster-3 cluster-1 cluster-3 rotated",
		"istio-system/istio-remote-secret-cluster-3 cluster-2 cluster-3 rotated")
	for _, p := range []string{"cluster-1", "cluster-2"} {
		istiodLists(t, l.member(p), 30*time.Second, syncedList(d, p)...)
	}
	if out, code := l.fleet(l.bed.Kubeconfig, "verify", "-f", file); code != 0 {
		t.Errorf("fleet verify after the repair: exit %d\n%s", code, out)
	}
}

// injectsForRemote asks c's istiod, at the injection path a remote's webhooks call
// (/inject/cluster/<remote>/net/<network>), to inject a pod of the remote, as the remote's
// apiserver would through the east-west gateway (which the bed does not run: its address
// is never dialled). The call goes to istiod's Service, port 443, its certificate verified
// against ca's root. It checks that istiod injects the pod as one of the remote's.
func injectsForRemote(t *testing.T, c *cluster.Cluster, ca *pki.CA, remote, network string) {
	t.Helper()
	addr, err := istiodAddr(c, 443)
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
