package check

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/link"
)

// clusterzSurvey is cluster-1's survey with one istiod listing cluster-2 synced, cluster-3
// timed out and cluster-5 syncing (the four statuses upstream's cluster.DebugInfo has; what
// the real istiod answers is read in pkg/cmd's fleet e2e tests); the Secret for cluster-4
// is one it does not list.
func clusterzSurvey(t *testing.T) *link.Survey {
	t.Helper()
	clusters := []link.ClusterStatus{
		{ID: "cluster-1", SyncStatus: "synced"},
		{ID: "cluster-2", SecretName: "istio-system/istio-remote-secret-cluster-2", SyncStatus: "synced"},
		{ID: "cluster-3", SecretName: "istio-system/istio-remote-secret-cluster-3", SyncStatus: "timeout"},
		{ID: "cluster-5", SecretName: "istio-system/istio-remote-secret-cluster-5", SyncStatus: "syncing"},
	}
	s := &link.Survey{Namespace: "istio-system", Istiods: []link.Istiod{{Pod: "istiod-6d8f9b7c4-x2x9k", Revision: "default", Clusters: clusters}}}
	for _, id := range []string{"cluster-2", "cluster-3", "cluster-4", "cluster-5"} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "istio-remote-secret-" + id, "namespace": "istio-system",
				"labels": map[string]any{"istio/multiCluster": "true"}, "annotations": map[string]any{"networking.istio.io/cluster": id}},
			"data": map[string]any{id: ""},
		}}
		s.Links = append(s.Links, link.FromSecret(u)...)
	}
	s.Probes = make([]*link.Probe, len(s.Links))
	return s
}

func TestLinkIstiodFromClusterz(t *testing.T) {
	env := &Env{IstioNamespace: "istio-system", links: &linkCache{survey: clusterzSurvey(t)}}
	env.links.once.Do(func() {})
	rep := Run(context.Background(), "remote-clusters", []Check{Links()[len(Links())-1]}, env)
	want := map[string]struct {
		passed   bool
		severity Severity
		says     string
	}{
		"cluster-2": {true, Error, "reports synced"},
		"cluster-3": {false, Error, "reports timeout"},
		"cluster-4": {false, Error, "does not list this cluster from this Secret"},
		"cluster-5": {false, Warning, "reports syncing"},
	}
	if len(rep.Results) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(rep.Results), len(want), rep.Results)
	}
	for _, r := range rep.Results {
		id := strings.TrimPrefix(r.Section, "Link to ")
		w, ok := want[id]
		if !ok || r.Check != "link-istiod" || r.Passed != w.passed || r.Severity != w.severity || !strings.Contains(r.Message, w.says) {
			t.Errorf("%s: %+v, want %+v", id, r, w)
		}
	}
	if !rep.FailedAt(Error) {
		t.Error("a timed-out cluster is not a failure")
	}
}

func TestRowsFromClusterz(t *testing.T) {
	rows := clusterzSurvey(t).Rows()
	var got []string
	for _, r := range rows {
		got = append(got, strings.Join([]string{r.Name, r.Secret, r.Status, r.Istiod, r.Revision}, " "))
	}
	want := []string{
		"cluster-1  synced istiod-6d8f9b7c4-x2x9k default",
		"cluster-2 istio-system/istio-remote-secret-cluster-2 synced istiod-6d8f9b7c4-x2x9k default",
		"cluster-3 istio-system/istio-remote-secret-cluster-3 timeout istiod-6d8f9b7c4-x2x9k default",
		"cluster-5 istio-system/istio-remote-secret-cluster-5 syncing istiod-6d8f9b7c4-x2x9k default",
		"cluster-4 istio-system/istio-remote-secret-cluster-4 not-registered istiod-6d8f9b7c4-x2x9k default",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// tokenLink is a link whose kubeconfig carries token.
func tokenLink(t *testing.T, token string) *link.Link {
	t.Helper()
	kc, err := link.Kubeconfig("cluster-2", "https://192.0.2.10:6443", "", nil, link.Auth{Token: []byte(token)})
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "istio-remote-secret-cluster-2", "namespace": "istio-system"},
		"data":     map[string]any{"cluster-2": base64.StdEncoding.EncodeToString(kc)},
	}}
	return &link.FromSecret(u)[0]
}

// jwt is an unsigned JWT with the claims (expiry only reads them).
func jwt(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(claims)) + ".c2ln"
}

func TestTokenExpiry(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return fmt.Sprintf(`{"exp":%d}`, now.Add(d).Unix()) }
	for _, tc := range []struct {
		name, token string
		passed      bool
		severity    Severity
		says        string
	}{
		{"long-lived", jwt(`{"iss":"kubernetes/serviceaccount"}`), true, Info, "carries no expiry"},
		{"not a JWT", "abc", true, Info, "carries no expiry"},
		{"in 30 days", jwt(at(30 * 24 * time.Hour)), true, "", "in 30 days"},
		{"in 8 days", jwt(at(8 * 24 * time.Hour)), true, "", "in 8 days"},
		{"in 6 days", jwt(at(6 * 24 * time.Hour)), false, "", "expires at 2026-12-07T12:00:00Z, in 144h0m0s"},
		{"expired", jwt(at(-time.Hour)), false, Error, "expired at 2026-12-01T11:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := expiryResult(tokenLink(t, tc.token), now)
			if r.Passed != tc.passed || r.Severity != tc.severity || !strings.Contains(r.Message, tc.says) {
				t.Errorf("%+v, want passed %v severity %q saying %q", r, tc.passed, tc.severity, tc.says)
			}
		})
	}
	// The check's own severity is the warning an unset one takes.
	for _, c := range Links() {
		if c.ID == "link-token-expiry" && c.Severity != Warning {
			t.Errorf("link-token-expiry is %s, want a warning", c.Severity)
		}
	}
}
