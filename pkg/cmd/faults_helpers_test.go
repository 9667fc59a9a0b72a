package cmd_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// snapshotKinds are what an install may write: every kind it applies or prunes, the CRDs
// and the namespaces.
var snapshotKinds = append([]schema.GroupVersionKind{
	{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
	{Version: "v1", Kind: "Namespace"},
}, install.PruneKinds...)

// objectVersions maps every object of snapshotKinds in the cluster (all namespaces, any labels)
// to its resourceVersion: two equal snapshots mean nothing of those kinds was created,
// changed or deleted in between. Install records (operator/history: one Secret written by
// every install, by design) are left out.
func objectVersions(t *testing.T, c *cluster.Cluster) map[string]string {
	t.Helper()
	client, err := kube.NewClientForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, gvk := range snapshotKinds {
		items, err := client.List(context.Background(), gvk, "")
		if err != nil {
			t.Fatalf("listing %s: %v", gvk.Kind, err)
		}
		for _, o := range items {
			if o.GetLabels()[history.LabelRecord] == "true" {
				continue
			}
			out[gvk.Kind+"/"+o.GetNamespace()+"/"+o.GetName()] = o.GetResourceVersion()
		}
	}
	return out
}

// versionsDiff lists what differs between two objectVersions, one line each.
func versionsDiff(before, after map[string]string) []string {
	var diffs []string
	for k, v := range before {
		switch w, ok := after[k]; {
		case !ok:
			diffs = append(diffs, "deleted "+k)
		case w != v:
			diffs = append(diffs, fmt.Sprintf("changed %s (resourceVersion %s → %s)", k, v, w))
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			diffs = append(diffs, "created "+k)
		}
	}
	sort.Strings(diffs)
	return diffs
}

// specFile writes an IstioOperator spec into the test's temporary directory.
func specFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(strings.TrimLeft(body, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
