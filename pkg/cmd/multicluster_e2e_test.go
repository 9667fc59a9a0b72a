package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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

// meshSteps are the walkthrough of docs/multicluster.md: per context, the install command
// lines (after "install -y") and the upstream comparison cases whose objects must exist.
var (
	eastwest1 = []string{"--set", "profile=eastwest", "--set", "values.global.network=net1",
		"--set", "eastWest.exposeIstiod=true", "--set", "eastWest.exposeServices=true"}
	eastwest2 = []string{"--set", "profile=eastwest", "--set", "values.global.network=net2",
		"--set", "eastWest.exposeServices=true"}
)

// TestMulticlusterE2E: multi-primary multi-network cluster-1 (net1) and cluster-2 (net2),
// and cluster-3 a remote of cluster-1 on net1, installed with our commands as
// docs/multicluster.md says, step by step; every object upstream's steps create exists with
// upstream's names and labels; remote-clusters and verify-install pass everywhere; the
// istio namespace that existed (for cacerts) has the network label, and re-installing
// writes nothing; precheck --remote-contexts names each disagreement between the clusters.
func TestMulticlusterE2E(t *testing.T) {
	start := time.Now()
	l := &linkBed{t: t, bed: cluster.GetBed(t, 3), seen: &seen{allowed: map[int]bool{}, tokens: map[string]bool{}}}
	t.Chdir("../..") // the walkthrough's files are relative to the repo root
	l.purgeBed()
	t.Cleanup(func() { l.purgeBed(); clearMeshMarks(t, l.bed) })
	ctx := context.Background()
	c1, c2, c3 := l.member("cluster-1"), l.member("cluster-2"), l.member("cluster-3")

	// Step 0: one root, a cacerts Secret in each primary's istio-system, made before the
	// install (which is why upstream's install misses the network label).
	ca := pki.New(t, pki.Valid)
	for _, c := range []*cluster.Cluster{c1, c2} {
		putCACerts(t, c, ca)
	}

	t.Run("the expose objects wait for the control plane", func(t *testing.T) {
		// cluster-3 has no Istio yet: no CRDs, no istiod. Nothing of the gateway's stage is applied.
		l := l.with(t)
		l.broken("cluster-3", "install the control plane first", "install", "-y", "--set", "profile=eastwest", "--set", "values.global.network=net1",
			"--set", "eastWest.exposeServices=true", "--readiness-timeout", "3s")
		if _, err := c3.Kube.CoreV1().Services("istio-system").Get(ctx, "istio-eastwestgateway", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the gateway's Service was applied before its Istio objects could be (err %v)", err)
		}
	})

	// Step 1: the primaries.
	l.must("cluster-1", "install", "-y", "-f", meshDir+"cluster-1.yaml")
	l.must("cluster-2", "install", "-y", "-f", meshDir+"cluster-2.yaml")
	t.Logf("primaries installed at %v", time.Since(start))

	t.Run("network label on an existing namespace", func(t *testing.T) {
		for c, want := range map[*cluster.Cluster]string{c1: "net1", c2: "net2"} {
			ns, err := c.Kube.CoreV1().Namespaces().Get(ctx, "istio-system", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := ns.Labels["topology.istio.io/network"]; got != want {
				t.Errorf("%s: istio-system's topology.istio.io/network is %q, want %q", c.Context, got, want)
			}
		}
	})

	t.Run("a re-install writes nothing", func(t *testing.T) {
		before := versions(t, c1, append(meshCase{name: "cluster-1"}.objects(t), "Namespace /istio-system"))
		l.must("cluster-1", "install", "-y", "-f", meshDir+"cluster-1.yaml")
		after := versions(t, c1, append(meshCase{name: "cluster-1"}.objects(t), "Namespace /istio-system"))
		for k, v := range before {
			if after[k] != v {
				t.Errorf("re-install wrote %s: resourceVersion %s -> %s", k, v, after[k])
			}
		}
		if len(before) < 30 {
			t.Errorf("compared %d objects only", len(before))
		}
	})

	// Step 2: the east-west gateways (injected by each primary's real istiod), cluster-1's
	// exposing istiod too, for the remote.
	l.must("cluster-1", append([]string{"install", "-y"}, eastwest1...)...)
	l.must("cluster-2", append([]string{"install", "-y"}, eastwest2...)...)
	t.Logf("east-west gateways installed at %v", time.Since(start))

	// Step 3: the remote, pointed at cluster-1's east-west gateway (its address is never
	// dialled: the bed's load balancer addresses are 192.0.2.x).
	addr := lbAddress(t, c1, "istio-system", "istio-eastwestgateway")
	remote := []string{"-f", meshDir + "cluster-3.yaml", "--set", "values.global.remotePilotAddress=" + addr, "--set", "external.remote.controlPlaneClusters=cluster-1"}
	l.must("cluster-3", append([]string{"install", "-y"}, remote...)...)
	t.Logf("remote installed at %v", time.Since(start))
	ns3, err := c3.Kube.CoreV1().Namespaces().Get(ctx, "istio-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ns3.Annotations["topology.istio.io/controlPlaneClusters"]; got != "cluster-1" || ns3.Labels["topology.istio.io/network"] != "net1" {
		t.Errorf("cluster-3's istio-system: controlPlaneClusters %q, network %q; want cluster-1, net1", got, ns3.Labels["topology.istio.io/network"])
	}

	// Step 4: the links: both ways between the primaries, primary to remote.
	l.must("cluster-2", "create-remote-secret", "--name", "cluster-2", "--apply-to", "cluster-1")
	l.must("cluster-1", "create-remote-secret", "--name", "cluster-1", "--apply-to", "cluster-2")
	l.must("cluster-3", "create-remote-secret", "--name", "cluster-3", "--apply-to", "cluster-1")
	t.Logf("linked at %v", time.Since(start))

	t.Run("upstream's objects", func(t *testing.T) {
		clear(discovered)
		for _, tc := range []struct {
			c    *cluster.Cluster
			name string
			// from, to rewrite upstream's recorded case for this cluster (its network)
			from, to string
		}{
			{c1, "cluster-1", "", ""}, {c2, "cluster-2", "", ""}, {c3, "cluster-3", "", ""},
			{c1, "eastwest-net1", "", ""}, {c2, "eastwest-net1", "net1", "net2"},
		} {
			want := upstreamIdentities(t, meshCase{name: tc.name})
			if tc.from != "" {
				for i := range want {
					want[i] = strings.ReplaceAll(want[i], tc.from, tc.to)
				}
			}
			missing := missingObjects(t, tc.c, want)
			for _, m := range missing {
				t.Errorf("%s: upstream's %s creates %s, not found with those labels", tc.c.Context, tc.name, m)
			}
		}
		// The samples' objects: expose-istiod and expose-services in cluster-1, expose-services
		// in cluster-2.
		for c, names := range map[*cluster.Cluster][]string{
			c1: {"Gateway istio-system/istiod-gateway ", "VirtualService istio-system/istiod-vs ", "Gateway istio-system/cross-network-gateway "},
			c2: {"Gateway istio-system/cross-network-gateway "},
		} {
			for _, m := range missingObjects(t, c, names) {
				t.Errorf("%s: upstream's samples/multicluster create %s, not found", c.Context, m)
			}
		}
	})

	t.Run("remote-clusters and verify-install pass", func(t *testing.T) {
		for ctx, want := range map[string][]string{"cluster-1": {"istio-remote-secret-cluster-2", "istio-remote-secret-cluster-3"}, "cluster-2": {"istio-remote-secret-cluster-1"}} {
			out := l.must(ctx, "remote-clusters")
			mustContain(t, "remote-clusters on "+ctx, out, want...)
		}
		l.must("cluster-3", "remote-clusters")
		l.must("cluster-1", "verify-install", "-f", meshDir+"cluster-1.yaml")
		l.must("cluster-1", append([]string{"verify-install"}, eastwest1...)...)
		l.must("cluster-2", "verify-install", "-f", meshDir+"cluster-2.yaml")
		l.must("cluster-2", append([]string{"verify-install"}, eastwest2...)...)
		l.must("cluster-3", append([]string{"verify-install"}, remote...)...)
	})

	t.Run("precheck across clusters", func(t *testing.T) {
		pre := func(sets ...string) []string {
			return append([]string{"x", "precheck", "-v", "-f", meshDir + "cluster-1.yaml", "--remote-contexts", "cluster-2,cluster-3"}, sets...)
		}
		out := l.must("cluster-1", pre()...)
		mustContain(t, "precheck of the walkthrough's mesh", out, `every cluster has mesh ID "mesh1"`, "every istiod signs under one root",
			`network "net2" has an east-west gateway in cluster-2`, "a loopback address")
		for _, tc := range []struct {
			name string
			sets []string
			want string
		}{
			{"two clusters with one name", []string{"--set", "values.global.multiCluster.clusterName=cluster-2"}, `all have cluster name "cluster-2"`},
			{"a cluster named Kubernetes", []string{"--set", "values.global.multiCluster.clusterName=Kubernetes"}, "cluster name is Kubernetes, the charts' default"},
			{"two mesh IDs", []string{"--set", "values.global.meshID=mesh2"}, `the clusters have 2 mesh IDs: "mesh1" in cluster-2, cluster-3; "mesh2" in cluster-1`},
			{"a network with no gateway", []string{"--set", "values.global.network=net3"}, `network "net3" has no east-west gateway`},
		} {
			l.broken("cluster-1", tc.want, pre(tc.sets...)...)
		}
		putCACerts(t, c2, pki.New(t, pki.Valid))
		l.broken("cluster-1", "the cacerts roots differ", pre()...)

		// fleet precheck runs the same registry: on the same mesh, with cluster-2's root
		// still a different one and a network without a gateway, it fails the same checks.
		t.Run("fleet precheck fails the same checks", func(t *testing.T) {
			l := l.with(t)
			out, errOut, code := l.istioctl("cluster-1", pre("--set", "values.global.network=net3", "-o", "json")...)
			single := crossChecks(t, code, out+errOut)
			file := filepath.Join(t.TempDir(), "fleet.yaml")
			if err := os.WriteFile(file, []byte(fmt.Sprintf(meshFleet, addr)), 0o600); err != nil {
				t.Fatal(err)
			}
			fout, fcode := l.fleet(l.bed.Kubeconfig, "precheck", "-f", file, "-o", "json")
			fleet := crossChecks(t, fcode, fout)
			for _, id := range []string{"mesh-trust", "mesh-network"} {
				if !single.failed[id] || !fleet.failed[id] {
					t.Errorf("%s: precheck --remote-contexts failed %v, fleet precheck %v; want it failed in both", id, single.failed, fleet.failed)
				}
			}
			mustContain(t, "fleet precheck", strings.Join(fleet.messages, "\n"), "the cacerts roots differ", `network "net3" has no east-west gateway`)
			for id := range single.ran {
				if !fleet.ran[id] {
					t.Errorf("precheck --remote-contexts ran %s, fleet precheck did not (it ran %v)", id, fleet.ran)
				}
			}
			if !reflect.DeepEqual(single.failed, fleet.failed) {
				t.Errorf("failed checks differ: precheck --remote-contexts %v, fleet precheck %v", single.failed, fleet.failed)
			}
		})
		putCACerts(t, c2, ca)
	})
	t.Logf("done at %v", time.Since(start))
}

// meshFleet is the walkthrough's mesh as a fleet file (%s: cluster-1's east-west gateway
// address), but with the remote cluster-3 on a network of its own, net3: a remote gets no
// east-west gateway from the fleet, so nothing reaches net3.
const meshFleet = `apiVersion: fleet.istioctl-installer.github.io/v1alpha1
kind: Fleet
metadata:
  name: walkthrough
spec:
  meshID: mesh1
  istioOperator:
    profile: default
  clusters:
  - {name: cluster-1, context: cluster-1, network: net1, role: primary}
  - {name: cluster-2, context: cluster-2, network: net2, role: primary}
  - {name: cluster-3, context: cluster-3, network: net3, role: remote, primary: cluster-1, remotePilotAddress: %s}
`

// crossRun is what a -o json check report says of its cross-cluster section: the checks
// that ran, those that failed, the failures' messages.
type crossRun struct {
	ran, failed map[string]bool
	messages    []string
}

// crossChecks reads a failed (exit 1) -o json report's cross-cluster section.
func crossChecks(t *testing.T, code int, out string) crossRun {
	t.Helper()
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	var rep struct {
		Results []struct {
			Check, Section, Message string
			Passed                  bool
		}
	}
	start, end := strings.Index(out, "{"), strings.LastIndex(out, "}")
	if start < 0 || json.Unmarshal([]byte(out[start:end+1]), &rep) != nil {
		t.Fatalf("no JSON report in\n%s", out)
	}
	r := crossRun{ran: map[string]bool{}, failed: map[string]bool{}}
	for _, res := range rep.Results {
		if res.Section != "Across clusters" {
			continue
		}
		r.ran[res.Check] = true
		if !res.Passed {
			r.failed[res.Check] = true
			r.messages = append(r.messages, res.Message)
		}
	}
	return r
}

// objects are the identities of a recorded upstream case.
func (c meshCase) objects(t *testing.T) []string { return upstreamIdentities(t, c) }

func putCACerts(t *testing.T, c *cluster.Cluster, ca *pki.CA) {
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

// clearMeshMarks removes what the walkthrough left outside the installs: the cacerts
// Secrets and the istio namespaces' network label and controlPlaneClusters annotation.
func clearMeshMarks(t *testing.T, b *cluster.Bed) {
	ctx := context.Background()
	patch := []byte(`{"metadata":{"labels":{"topology.istio.io/network":null},"annotations":{"topology.istio.io/controlPlaneClusters":null}}}`)
	for _, c := range b.Clusters {
		_ = c.Kube.CoreV1().Secrets("istio-system").Delete(ctx, "cacerts", metav1.DeleteOptions{})
		if _, err := c.Kube.CoreV1().Namespaces().Patch(ctx, "istio-system", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("%s: %v", c.Context, err)
		}
	}
}

// lbAddress waits for the bed's load balancer to give a Service an address.
func lbAddress(t *testing.T, c *cluster.Cluster, ns, name string) string {
	t.Helper()
	var ip string
	harness.Eventually(t, 30*time.Second, "Service "+ns+"/"+name+"'s load balancer address", func() (bool, string) {
		svc, err := c.Kube.CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ing := svc.Status.LoadBalancer.Ingress; len(ing) > 0 && ing[0].IP != "" {
			ip = ing[0].IP
			return true, ""
		}
		return false, "none"
	})
	return ip
}

// discovered caches a cluster's API groups for liveObject (the kinds do not change while
// the test reads; a group installed later is found by a refresh in versions' callers).
var discovered = map[*cluster.Cluster][]*restmapper.APIGroupResources{}

// liveObject reads the object an identity line names ("Kind ns/name labels").
func liveObject(t *testing.T, c *cluster.Cluster, id string) *unstructured.Unstructured {
	t.Helper()
	fields := strings.SplitN(id, " ", 3)
	kind, nsName := fields[0], fields[1]
	ns, name, _ := strings.Cut(nsName, "/")
	groups, ok := discovered[c]
	if !ok {
		var err error
		if groups, err = restmapper.GetAPIGroupResources(c.Kube.Discovery()); err != nil {
			t.Fatal(err)
		}
		discovered[c] = groups
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	var gk schema.GroupKind
	for _, g := range groups {
		for _, rs := range g.VersionedResources {
			for _, r := range rs {
				if r.Kind == kind && !strings.Contains(r.Name, "/") && (gk.Kind == "" || g.Group.Name == "networking.istio.io") {
					gk = schema.GroupKind{Group: g.Group.Name, Kind: kind}
				}
			}
		}
	}
	m, err := mapper.RESTMapping(gk)
	if err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
	if ns != "" {
		ri = dyn.Resource(m.Resource).Namespace(ns)
	}
	o, err := ri.Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// missingObjects lists the identities with no live object carrying at least their labels.
func missingObjects(t *testing.T, c *cluster.Cluster, ids []string) []string {
	t.Helper()
	var out []string
	for _, id := range ids {
		o := liveObject(t, c, id)
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

// versions reads the resourceVersion of each identity's live object.
func versions(t *testing.T, c *cluster.Cluster, ids []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, id := range ids {
		if o := liveObject(t, c, id); o != nil {
			out[strings.SplitN(id, " ", 3)[0]+" "+strings.SplitN(id, " ", 3)[1]] = o.GetResourceVersion()
		}
	}
	return out
}
