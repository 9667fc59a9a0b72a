package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func metav1SchemeGVR(kind string) schema.GroupVersionResource {
	resources := map[string]string{"ConfigMap": "configmaps", "ServiceAccount": "serviceaccounts", "Service": "services", "Secret": "secrets"}
	return schema.GroupVersionResource{Version: "v1", Resource: resources[kind]}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func fmtSscanf(s, format string, a ...any) (int, error) { return fmt.Sscanf(s, format, a...) }

// objectWrites reads the apiserver's request counters and returns the write requests
// (create, update, patch, apply, delete) to objects, by "VERB resource" and response code.
// Left out is what the cluster's controllers and kwok write on their own and an install
// never writes: leases, events, pods, ReplicaSets, Endpoints, EndpointSlices and every
// subresource (status, heartbeats). A server-side dry run (dry_run="All") writes nothing and
// is left out too.
func objectWrites(t *testing.T, c *cluster.Cluster) map[string]float64 {
	t.Helper()
	raw, err := c.Kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("reading the apiserver's metrics: %v", err)
	}
	label := func(line, name string) string {
		_, rest, ok := strings.Cut(line, name+`="`)
		if !ok {
			return ""
		}
		v, _, _ := strings.Cut(rest, `"`)
		return v
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		verb, resource := label(line, "verb"), label(line, "resource")
		switch {
		case !strings.Contains(" POST PUT PATCH APPLY DELETE DELETECOLLECTION CREATE UPDATE ", " "+verb+" "),
			strings.Contains(" leases events pods replicasets endpoints endpointslices ", " "+resource+" "),
			label(line, "subresource") != "", label(line, "dry_run") != "":
			continue
		}
		fields := strings.Fields(line)
		n, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			t.Fatalf("apiserver metrics line %q: %v", line, err)
		}
		out[verb+" "+resource+" "+label(line, "code")] += n
	}
	return out
}

// unfilled names the active namespaces still without the default ServiceAccount or the
// kube-root-ca.crt ConfigMap the controllers put in each.
func unfilled(t *testing.T, c *cluster.Cluster, namespaces []corev1.Namespace) []string {
	t.Helper()
	ctx := context.Background()
	sas, err := c.Kube.CoreV1().ServiceAccounts("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=default"})
	if err != nil {
		t.Fatal(err)
	}
	cms, err := c.Kube.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=kube-root-ca.crt"})
	if err != nil {
		t.Fatal(err)
	}
	has := map[string]int{}
	for _, sa := range sas.Items {
		has[sa.Namespace]++
	}
	for _, cm := range cms.Items {
		has[cm.Namespace]++
	}
	var out []string
	for _, ns := range namespaces {
		if ns.Status.Phase != corev1.NamespaceTerminating && has[ns.Name] < 2 {
			out = append(out, ns.Name)
		}
	}
	return out
}

// settled waits until no namespace is being deleted: the namespace controller's clean-up of
// one (an earlier test's) writes to every kind in it, which objectWrites would count.
func settled(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(2 * time.Minute)
	for {
		list, err := c.Kube.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var terminating []string
		for _, ns := range list.Items {
			if ns.Status.Phase == corev1.NamespaceTerminating {
				terminating = append(terminating, ns.Name)
			}
		}
		// And until the controllers have filled every new namespace: the default
		// ServiceAccount and the root CA ConfigMap they create in one just made (the test's
		// own istio-system) would otherwise show up between two snapshots.
		for _, ns := range unfilled(t, c, list.Items) {
			terminating = append(terminating, ns+" (not yet given its default ServiceAccount and kube-root-ca.crt)")
		}
		if len(terminating) == 0 {
			t.Logf("settled after %v", time.Since(start))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespaces still terminating after 2 minutes: %v", terminating)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// writesBetween lists what the apiserver counted between two objectWrites readings.
func writesBetween(before, after map[string]float64) []string {
	var out []string
	for k, n := range after {
		if d := n - before[k]; d > 0 {
			out = append(out, fmt.Sprintf("%s ×%g", k, d))
		}
	}
	sort.Strings(out)
	return out
}

// istioctlOn returns a runner of istioctl commands against c that fails the test on an
// error (with both output streams) and returns stdout.
func istioctlOn(t *testing.T, c *cluster.Cluster) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		out, stderr, err := run(t, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
		if err != nil {
			t.Fatalf("istioctl %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr)
		}
		return out
	}
}
