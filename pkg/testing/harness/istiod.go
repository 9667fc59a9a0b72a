package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// What the multi-cluster tests read from a primary's real istiod, never from istioctl:
// its /debug/clusterz, through istiod's Service (its cluster IP is in the bed's loopback
// service range; realistiod carries the connection to the ready istiod behind it, as
// kube-proxy would).

// IstiodAddr is host:port of istiod's Service in c's istio-system.
func IstiodAddr(c *cluster.Cluster, port int) (string, error) {
	svc, err := c.Kube.CoreV1().Services("istio-system").Get(context.Background(), "istiod", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(port)), nil
}

// Clusterz is what c's istiod lists at /debug/clusterz (upstream's cluster.DebugInfo), one
// "id secret status" line per cluster, sorted.
func Clusterz(c *cluster.Cluster) ([]string, error) {
	addr, err := IstiodAddr(c, 15014)
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
	var list []struct {
		ID         string `json:"id"`
		SecretName string `json:"secretName"`
		SyncStatus string `json:"syncStatus"`
	}
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

// IstiodLists waits until c's istiod lists exactly want (Clusterz's lines).
func IstiodLists(t testing.TB, c *cluster.Cluster, timeout time.Duration, want ...string) {
	t.Helper()
	if err := WaitIstiodLists(c, timeout, want...); err != nil {
		t.Fatal(err)
	}
}

// WaitIstiodLists is IstiodLists for any goroutine: the error says what istiod listed last.
func WaitIstiodLists(c *cluster.Cluster, timeout time.Duration, want ...string) error {
	sort.Strings(want)
	err := Within(timeout, 250*time.Millisecond, func() (bool, string) {
		got, err := Clusterz(c)
		return err == nil && slices.Equal(got, want), fmt.Sprintf("it lists %q (%v)", got, err)
	})
	if err != nil {
		return fmt.Errorf("%s's istiod does not list %q: %w", c.Context, want, err)
	}
	return nil
}

// IstiodPods are the running istiod pods of c's istio-system.
func IstiodPods(t testing.TB, c *cluster.Cluster) []string {
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

// SameAsIstiod checks that remote-clusters' rows in c say what its istiod lists (each
// "name secret status"), naming the istiod pod that runs.
func SameAsIstiod(t testing.TB, c *cluster.Cluster, rows []link.Row) {
	t.Helper()
	want, err := Clusterz(c)
	if err != nil {
		t.Fatalf("%s's istiod: %v", c.Context, err)
	}
	var got, pods []string
	for _, r := range rows {
		got = append(got, strings.Join([]string{r.Name, r.Secret, r.Status}, " "))
		if !slices.Contains(pods, r.Istiod) {
			pods = append(pods, r.Istiod)
		}
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("remote-clusters in %s says\n  %s\nits istiod lists\n  %s", c.Context, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if running := IstiodPods(t, c); !slices.Equal(pods, running) {
		t.Errorf("remote-clusters in %s names the istiods %v, the running ones are %v", c.Context, pods, running)
	}
}
