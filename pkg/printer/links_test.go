package printer

import (
	"bytes"
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
