package fleetrun_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
)

// What the multi-network tests read of a mesh in the bed: objects by the identity lines of
// upstream's recordings, load balancer addresses, the istio namespace's marks.

// fleetReader reads the objects identity lines name ("Kind ns/name labels") in one
// cluster, with the API groups found when it was made.
type fleetReader struct {
	t      *testing.T
	groups []*restmapper.APIGroupResources
	dyn    dynamic.Interface
}

func fleetReaderOf(t *testing.T, c *cluster.Cluster) *fleetReader {
	t.Helper()
	groups, err := restmapper.GetAPIGroupResources(c.Kube.Discovery())
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &fleetReader{t: t, groups: groups, dyn: dyn}
}

// get reads the object id names; nil when there is none.
func (r *fleetReader) get(id string) *unstructured.Unstructured {
	r.t.Helper()
	fields := strings.SplitN(id, " ", 3)
	kind, nsName := fields[0], fields[1]
	ns, name, _ := strings.Cut(nsName, "/")
	var gk schema.GroupKind
	for _, g := range r.groups {
		for _, rs := range g.VersionedResources {
			for _, res := range rs {
				if res.Kind == kind && !strings.Contains(res.Name, "/") && (gk.Kind == "" || g.Group.Name == "networking.istio.io") {
					gk = schema.GroupKind{Group: g.Group.Name, Kind: kind}
				}
			}
		}
	}
	m, err := restmapper.NewDiscoveryRESTMapper(r.groups).RESTMapping(gk)
	if err != nil {
		r.t.Fatalf("%s: %v", kind, err)
	}
	var ri dynamic.ResourceInterface = r.dyn.Resource(m.Resource)
	if ns != "" {
		ri = r.dyn.Resource(m.Resource).Namespace(ns)
	}
	o, err := ri.Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return o
}

// fleetMissingObjects lists the identities with no live object carrying at least their
// labels.
func fleetMissingObjects(t *testing.T, c *cluster.Cluster, ids []string) []string {
	t.Helper()
	r := fleetReaderOf(t, c)
	var out []string
	for _, id := range ids {
		o := r.get(id)
		if o == nil {
			out = append(out, id+" (absent)")
			continue
		}
		fields := strings.SplitN(id, " ", 3)
		if len(fields) == 3 && fields[2] != "" {
			live := o.GetLabels()
			for _, kv := range strings.Split(fields[2], ",") {
				k, v, _ := strings.Cut(kv, "=")
				if live[k] != v {
					out = append(out, fmt.Sprintf("%s (label %s is %q)", id, k, live[k]))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// fleetVersionsOf reads the resourceVersion of each identity's live object.
func fleetVersionsOf(t *testing.T, c *cluster.Cluster, ids []string) map[string]string {
	t.Helper()
	r := fleetReaderOf(t, c)
	out := map[string]string{}
	for _, id := range ids {
		if o := r.get(id); o != nil {
			f := strings.SplitN(id, " ", 3)
			out[f[0]+" "+f[1]] = o.GetResourceVersion()
		}
	}
	return out
}

// fleetUpstream are the identities upstream's manifest generate gave for a case of the
// walkthrough (testdata/multicluster/upstream, from the repository's root).
func fleetUpstream(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/multicluster/upstream/" + name + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// fleetLBAddress waits for the bed's load balancer to give a Service an address.
func fleetLBAddress(t *testing.T, c *cluster.Cluster, ns, name string) string {
	t.Helper()
	var ip string
	harness.Eventually(t, 30*time.Second, "Service "+ns+"/"+name+"'s load balancer address", func() (bool, string) {
		svc, err := c.Kube.CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if ing := svc.Status.LoadBalancer.Ingress; len(ing) > 0 && ing[0].IP != "" {
			ip = ing[0].IP
			return true, ""
		}
		return false, "none"
	})
	return ip
}

// fleetControlledBy checks the marks a remote's istio-system gets: the cluster whose
// istiod controls it, its network.
func fleetControlledBy(t *testing.T, remote *cluster.Cluster, primary, network string) {
	t.Helper()
	ns, err := remote.Kube.CoreV1().Namespaces().Get(context.Background(), "istio-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ns.Annotations["topology.istio.io/controlPlaneClusters"]; got != primary || ns.Labels["topology.istio.io/network"] != network {
		t.Errorf("%s's istio-system: controlPlaneClusters %q, network %q; want %s, %s", remote.Context, got, ns.Labels["topology.istio.io/network"], primary, network)
	}
}

// fleetPutCACerts makes c's cacerts Secret of ca, by hand, as the walkthrough does.
func fleetPutCACerts(t *testing.T, c *cluster.Cluster, ca *pki.CA) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, fixture.Namespace("istio-system"), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	_ = c.Kube.CoreV1().Secrets("istio-system").Delete(ctx, "cacerts", metav1.DeleteOptions{})
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cacerts", Namespace: "istio-system"}, Data: ca.SecretData()}
	if _, err := c.Kube.CoreV1().Secrets("istio-system").Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// fleetClearMeshMarks removes what a mesh left outside the installs: the cacerts Secrets
// and the istio namespaces' network label and controlPlaneClusters annotation.
func fleetClearMeshMarks(t *testing.T, b *cluster.Bed) {
	ctx := context.Background()
	patch := []byte(`{"metadata":{"labels":{"topology.istio.io/network":null},"annotations":{"topology.istio.io/controlPlaneClusters":null}}}`)
	for _, c := range b.Clusters {
		_ = c.Kube.CoreV1().Secrets("istio-system").Delete(ctx, "cacerts", metav1.DeleteOptions{})
		if _, err := c.Kube.CoreV1().Namespaces().Patch(ctx, "istio-system", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("%s: %v", c.Context, err)
		}
	}
}
