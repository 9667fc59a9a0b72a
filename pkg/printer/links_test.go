package printer

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
)

// TestRemoteClustersClusterz: the table remote-clusters prints for two istiods (upstream's
// columns and spacing), and the same rows as -o json.
func TestRemoteClustersClusterz(t *testing.T) {
	clusters := []link.ClusterStatus{
		{ID: "cluster-1", SyncStatus: "synced"},
		{ID: "cluster-2", SecretName: "istio-system/istio-remote-secret-cluster-2", SyncStatus: "synced"},
		{ID: "cluster-3", SecretName: "istio-system/istio-remote-secret-cluster-3", SyncStatus: "timeout"},
		{ID: "cluster-5", SecretName: "istio-system/istio-remote-secret-cluster-5", SyncStatus: "syncing"},
	}
	s := &link.Survey{Namespace: "istio-system", Istiods: []link.Istiod{
		{Pod: "istiod-6d8f9b7c4-x2x9k", Revision: "default", Clusters: clusters},
		{Pod: "istiod-canary-5f7d8c9b6-q8w7e", Revision: "canary", Clusters: clusters[:2]},
	}}
	for _, f := range []Format{Table, JSON} {
		t.Run(string(f), func(t *testing.T) {
			var buf bytes.Buffer
			if err := RemoteClusters(&buf, s.Rows(), &check.Report{}, f); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "../../testdata/multicluster/remote-clusters-clusterz-"+string(f)+".txt", buf.Bytes())
		})
	}
}

// TestRemoteClustersFormats: the rows of two synced clusters in each format remote-clusters
// takes: upstream's table, {clusters, links} as JSON, and the kubectl formats.
func TestRemoteClustersFormats(t *testing.T) {
	rows := []link.Row{
		{Name: "cluster-1", Status: "synced", Istiod: "istiod-6d8f9b7c4-x2x9k", Revision: "default"},
		{Name: "cluster-2", Secret: "istio-system/istio-remote-secret-cluster-2", Status: "synced", Istiod: "istiod-6d8f9b7c4-x2x9k", Revision: "default"},
	}
	rep := &check.Report{Command: "remote-clusters", Results: []check.Result{{Check: "link-auth", Passed: true, Message: "may do all"}}}
	print := func(f Format) string {
		t.Helper()
		var buf bytes.Buffer
		if err := RemoteClusters(&buf, rows, rep, f); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	table := print(Table)
	for _, row := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^NAME\s+SECRET\s+STATUS\s+ISTIOD\s+REVISION$`),
		regexp.MustCompile(`(?m)^cluster-1\s+synced\s+istiod-\S+\s+default$`),
		regexp.MustCompile(`(?m)^cluster-2\s+istio-system/istio-remote-secret-cluster-2\s+synced\s+istiod-\S+\s+default$`),
	} {
		if !row.MatchString(table) {
			t.Errorf("the table lacks a line like %s:\n%s", row, table)
		}
	}
	if !strings.Contains(table, "may do all") {
		t.Errorf("the table is not followed by the report:\n%s", table)
	}
	var doc struct {
		Clusters []map[string]string `json:"clusters"`
		Links    struct {
			Results []map[string]any `json:"results"`
		} `json:"links"`
	}
	if err := json.Unmarshal([]byte(print(JSON)), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Clusters) != 2 || doc.Clusters[1]["name"] != "cluster-2" || doc.Clusters[1]["status"] != "synced" || len(doc.Links.Results) != 1 {
		t.Errorf("-o json: %+v", doc)
	}
	if got := print("name"); got != "remotecluster/cluster-1\nremotecluster/cluster-2\n" {
		t.Errorf("-o name = %q", got)
	}
	if got := print("custom-columns=NAME:.name,STATUS:.status"); !strings.Contains(got, "cluster-2   synced") {
		t.Errorf("-o custom-columns = %q", got)
	}
}

// TestRetrying: remote-clusters --wait says each failed attempt before the next.
func TestRetrying(t *testing.T) {
	var buf bytes.Buffer
	Retrying(&buf, 1, &check.Report{Summary: check.Summary{Errors: 2}})
	if got := buf.String(); !strings.Contains(got, "2 link problem(s) (attempt 1); checking again") {
		t.Errorf("Retrying says %q", got)
	}
}

// TestRemoteSecretApplied: what create-remote-secret --apply-to says it wrote: created or
// updated, where, the token's kind and expiry, and the previous tokens deleted.
func TestRemoteSecretApplied(t *testing.T) {
	token := SecretApplied{ClusterID: "cluster-2", Server: "https://127.0.0.1:6443",
		TokenSecret: "Secret/istio-system/istio-reader-service-account-istio-remote-secret-token-abcde", TokenKind: "a long-lived ServiceAccount token"}
	created, rotated := token, token
	created.Created = true
	rotated.Deleted = []string{"Secret/istio-system/old"}
	for _, tc := range []struct {
		name string
		res  SecretApplied
		want []string
	}{
		{"created", created,
			[]string{"Secret istio-system/istio-remote-secret-cluster-2 created in context cluster-1", "credentials: a long-lived ServiceAccount token, in Secret/", "expires: never"}},
		{"rotated", rotated,
			[]string{"updated in context cluster-1", "previous token: Secret/istio-system/old deleted: it stops authenticating"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.res.Secret, tc.res.Context = "istio-system/istio-remote-secret-cluster-2", "cluster-1"
			var buf bytes.Buffer
			RemoteSecretApplied(&buf, &tc.res)
			for _, want := range tc.want {
				if !strings.Contains(buf.String(), want) {
					t.Errorf("says\n%s\nwant %q", buf.String(), want)
				}
			}
		})
	}
}
