package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// AuditWrites reads the apiserver's audit log and returns the write requests (create,
// update, patch, apply, delete) to objects, by "VERB resource" and response code, that the
// admin and the bed's own components sent: istiod's (a ServiceAccount's: it renews its
// leader elections and patches its webhooks on its own) are left out, as is what the
// cluster's controllers and the bed write on their own and an install never writes: leases,
// events, pods, ReplicaSets, Endpoints, EndpointSlices, kwok's Logs and PortForwards, and
// every subresource (status, heartbeats). A server-side dry run writes nothing and is left
// out too.
func AuditWrites(t testing.TB, c *cluster.Cluster) map[string]float64 {
	t.Helper()
	out, err := ReadAuditWrites(c.AuditLog())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ReadAuditWrites is AuditWrites of the audit log at path.
func ReadAuditWrites(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the apiserver's audit log: %v", err)
	}
	defer f.Close()
	verbs := map[string]string{"create": "POST", "update": "PUT", "patch": "PATCH", "delete": "DELETE", "deletecollection": "DELETECOLLECTION"}
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e struct {
			Verb       string `json:"verb"`
			RequestURI string `json:"requestURI"`
			User       struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef struct {
				Resource    string `json:"resource"`
				Subresource string `json:"subresource"`
			} `json:"objectRef"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("audit log line %q: %v", sc.Text(), err)
		}
		verb, ok := verbs[e.Verb]
		switch {
		case !ok, strings.HasPrefix(e.User.Username, "system:serviceaccount:"),
			strings.Contains(" leases events pods replicasets endpoints endpointslices logs portforwards ", " "+e.ObjectRef.Resource+" "),
			e.ObjectRef.Subresource != "", strings.Contains(e.RequestURI, "dryRun=All"):
			continue
		}
		out[fmt.Sprintf("%s %s %d", verb, e.ObjectRef.Resource, e.ResponseStatus.Code)]++
	}
	return out, sc.Err()
}

// WritesBetween lists what the apiserver counted between two AuditWrites readings.
func WritesBetween(before, after map[string]float64) []string {
	var out []string
	for k, n := range after {
		if d := n - before[k]; d > 0 {
			out = append(out, fmt.Sprintf("%s ×%g", k, d))
		}
	}
	sort.Strings(out)
	return out
}

// unfilled names the active namespaces still without the default ServiceAccount or the
// kube-root-ca.crt ConfigMap the controllers put in each.
func unfilled(t testing.TB, c *cluster.Cluster, namespaces []corev1.Namespace) []string {
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

// Settled waits until no namespace is being deleted: the namespace controller's clean-up of
// one (an earlier test's) writes to every kind in it, which AuditWrites would count.
func Settled(t testing.TB, c *cluster.Cluster) {
	t.Helper()
	start := time.Now()
	Eventually(t, 2*time.Minute, "namespaces still terminating", func() (bool, string) {
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
		return len(terminating) == 0, fmt.Sprint(terminating)
	})
	t.Logf("settled after %v", time.Since(start))
}
