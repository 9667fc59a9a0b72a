package fleetrun_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestFleetE2E: fleet precheck on the empty bed, with a member unreachable; then the bed
// installed and linked by hand with the single-cluster actions as fleet dump says, and
// fleet verify passing, then catching, in the section of its cluster, each break.
func TestFleetE2E(t *testing.T) {
	b := newFleetBed(t)
	bed := b.bed

	t.Run("precheck on the empty bed", func(t *testing.T) {
		res := b.with(t).precheck("", fleetExample)
		if res.Failed || !res.Report.Fleet || res.Report.Kind != check.KindPrecheck {
			t.Fatalf("fleet precheck: failed %v, fleet %v, kind %q\n%s", res.Failed, res.Report.Fleet, res.Report.Kind, fleetFailures(res.Report))
		}
		fleetHolds(t, "fleet precheck", res.Report, false, fleetWant{"cluster cluster-1: ", ""}, fleetWant{"cluster cluster-2: ", ""},
			fleetWant{"cluster cluster-3: ", ""}, fleetWant{check.SectionCrossCluster, ""},
			fleetWant{"Links of the fleet", "Secret/istio-system/istio-remote-secret-cluster-3 in cluster cluster-2: is free"})
	})

	t.Run("precheck with a cluster unreachable", func(t *testing.T) {
		res := b.with(t).precheck(harness.UnreachableKubeconfig(t, bed.Kubeconfig, "cluster-2"), fleetExample)
		if !res.Failed {
			t.Fatalf("fleet precheck passes with cluster-2 unreachable:\n%s", fleetLines(res.Report, false))
		}
		failed, passed := map[string]bool{}, map[string]bool{}
		for _, r := range res.Report.Results {
			sec, _, _ := strings.Cut(r.Section, ": ")
			if !r.Failing() { // a note fails nothing
				passed[sec] = true
				continue
			}
			failed[sec] = true
			if sec == "cluster cluster-2" && (r.Check != "cluster-reachable" || !strings.Contains(r.Message, "cannot reach it through context cluster-2")) {
				t.Errorf("cluster-2's failure: %+v", r)
			}
		}
		if !failed["cluster cluster-2"] || failed["cluster cluster-1"] || failed["cluster cluster-3"] || !passed["cluster cluster-1"] || !passed["cluster cluster-3"] {
			t.Errorf("failed sections %v, passed %v: want cluster-2 failed and cluster-1 and -3 checked and passing\n%s", failed, passed, fleetLines(res.Report, false))
		}
	})

	// Install and link by hand, as the dump says.
	dump := fleetDumpOf(t, b, fleetExample)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(dump.Clusters))
	for i, c := range dump.Clusters {
		wg.Go(func() { errs[i] = b.installSpec(c.Context, dump.spec(c.Name)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("install of %s: %v", dump.Clusters[i].Name, err)
		}
	}
	t.Logf("installed 3 clusters in %v", time.Since(start))
	for _, ln := range dump.Links {
		b.linkAs(ln.Command)
	}
	b.collectTokens()

	t.Run("verify passes", func(t *testing.T) {
		res := b.with(t).verify("", fleetExample)
		if res.Failed || res.Report.Kind != check.KindVerify || !res.Report.Fleet {
			t.Fatalf("fleet verify: failed %v, kind %q, fleet %v\n%s", res.Failed, res.Report.Kind, res.Report.Fleet, fleetFailures(res.Report))
		}
		fleetHolds(t, "fleet verify", res.Report, false, fleetWant{"cluster cluster-1: Link to cluster-3", ""}, fleetWant{"cluster cluster-2: Link to cluster-1", ""},
			fleetWant{"Links of the fleet", "Secret/istio-system/istio-remote-secret-cluster-1 in cluster cluster-2: is there"})
	})

	ctx := context.Background()
	c1, c2 := b.member("cluster-1"), b.member("cluster-2")
	for _, tc := range []struct {
		name string
		// want are the failures the report must hold, each in the section of its cluster.
		want         []fleetWant
		kubeconfig   func(t *testing.T) string
		breakIt, fix func(t *testing.T, b *fleetBed)
	}{
		{name: "a link missing", want: []fleetWant{{"Links of the fleet", "Secret/istio-system/istio-remote-secret-cluster-3 in cluster cluster-1: is missing"}},
			breakIt: func(t *testing.T, b *fleetBed) {
				if err := c1.Kube.CoreV1().Secrets("istio-system").Delete(ctx, "istio-remote-secret-cluster-3", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			fix: func(t *testing.T, b *fleetBed) { b.link("cluster-3", "cluster-3", "cluster-1") }},
		{name: "a reader binding removed", want: []fleetWant{{"cluster cluster-1: Link to cluster-2", "may do none of the"}},
			breakIt: func(t *testing.T, b *fleetBed) {
				if err := c2.Kube.RbacV1().ClusterRoleBindings().Delete(ctx, "istio-reader-clusterrole-istio-system", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			fix: func(t *testing.T, b *fleetBed) { b.link("cluster-2", "cluster-2", "cluster-1") }},
		{name: "a link with the wrong cluster ID", want: []fleetWant{{"cluster cluster-1: Link to cluster-x", `that cluster calls itself "cluster-2"`}},
			breakIt: func(t *testing.T, b *fleetBed) { b.link("cluster-2", "cluster-x", "cluster-1") },
			fix: func(t *testing.T, b *fleetBed) {
				if err := c1.Kube.CoreV1().Secrets("istio-system").Delete(ctx, "istio-remote-secret-cluster-x", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a cluster that calls itself otherwise",
			want: []fleetWant{{"cluster cluster-2: Drift from the spec", "Deployment/istio-system/istiod: 1 field(s) differ"},
				{"cluster cluster-1: Link to cluster-2", `that cluster calls itself "cluster-9" (CLUSTER_ID`}},
			breakIt: func(t *testing.T, b *fleetBed) { fleetSetClusterID(t, c2, "cluster-9") },
			fix:     func(t *testing.T, b *fleetBed) { fleetSetClusterID(t, c2, "cluster-2") }},
		{name: "a cluster unreachable", want: []fleetWant{{"cluster cluster-3: Cluster", "cannot reach it through context cluster-3"}},
			kubeconfig: func(t *testing.T) string { return harness.UnreachableKubeconfig(t, bed.Kubeconfig, "cluster-3") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := b.with(t)
			kc := ""
			if tc.kubeconfig != nil {
				kc = tc.kubeconfig(t)
			}
			if tc.breakIt != nil {
				tc.breakIt(t, b)
			}
			res := b.verify(kc, fleetExample)
			if !res.Failed {
				t.Errorf("fleet verify passes")
			}
			fleetHolds(t, "fleet verify", res.Report, true, tc.want...)
			// The other clusters are checked all the same.
			fleetHolds(t, "fleet verify", res.Report, false, fleetWant{"cluster cluster-1: ", ""}, fleetWant{"cluster cluster-2: ", ""})
			if tc.fix != nil {
				tc.fix(t, b)
				b.collectTokens()
			}
			b.verified("after the fix", fleetExample)
		})
	}

	t.Run("no credential said", func(t *testing.T) { b.noCredentialSaid(t) })
}

// fleetSetClusterID sets the CLUSTER_ID of c's istiod, as an install with another
// clusterName would have.
func fleetSetClusterID(t *testing.T, c *cluster.Cluster, id string) {
	t.Helper()
	d, err := c.Kube.AppsV1().Deployments("istio-system").Get(context.Background(), "istiod", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "CLUSTER_ID" {
			patch := `[{"op":"replace","path":"/spec/template/spec/containers/0/env/` + strconv.Itoa(i) + `/value","value":"` + id + `"}]`
			if _, err := c.Kube.AppsV1().Deployments("istio-system").Patch(context.Background(), "istiod", types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			// The new pod runs a real istiod: a few seconds until it serves.
			c.WaitRolledOut(t, "istio-system", "istiod")
			return
		}
	}
	t.Fatal("istiod has no CLUSTER_ID")
}
