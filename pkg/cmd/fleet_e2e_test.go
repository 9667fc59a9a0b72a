package cmd_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

const fleetExample = "../../docs/examples/fleet-3-clusters.yaml"

// fleetRun runs a fleet command with the bed's kubeconfig (or another) and returns
// stdout+stderr and the exit code.
func (l *linkBed) fleet(kubeconfig string, args ...string) (string, int) {
	l.t.Helper()
	r := harness.Istioctl{T: l.t, Kubeconfig: kubeconfig}.Run(append([]string{"x", "fleet"}, args...)...)
	errOut := r.Stderr + r.ErrorLine()
	l.record(false, r.Stdout, errOut)
	return r.Stdout + errOut, r.Code
}

// unreachableKubeconfig is the bed's kubeconfig with member's server at a port nothing
// serves on loopback.
func unreachableKubeconfig(t *testing.T, bed *cluster.Bed, member string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(bed.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clusters[cfg.Contexts[member].Cluster].Server = "https://127.0.0.1:1"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFleetE2E: fleet precheck on the empty bed, with a member unreachable; then the bed
// installed and linked by hand with the single-cluster commands as fleet dump says, and
// fleet verify passing, then catching, named with its cluster, each break.
func TestFleetE2E(t *testing.T) {
	bed := cluster.GetBed(t, 3)
	l := &linkBed{t: t, bed: bed, seen: &seen{allowed: map[int]bool{}, tokens: map[string]bool{}}}
	l.purgeBed()
	t.Cleanup(l.purgeBed)

	t.Run("precheck on the empty bed", func(t *testing.T) {
		l := l.with(t)
		out, code := l.fleet(bed.Kubeconfig, "precheck", "-v", "-f", fleetExample)
		if code != 0 {
			t.Fatalf("fleet precheck: exit %d\n%s", code, out)
		}
		for _, want := range []string{"cluster cluster-1: ", "cluster cluster-2: ", "cluster cluster-3: ", "Across clusters", "Links of the fleet",
			"Secret/istio-system/istio-remote-secret-cluster-3 in cluster cluster-2: is free", "No issues found when checking the clusters of the fleet"} {
			if !strings.Contains(out, want) {
				t.Errorf("fleet precheck says\n%s\nwant %q", out, want)
			}
		}
		for format, want := range map[string]string{"junit": "<testsuite", "yaml": "command: fleet precheck"} {
			out, code := l.fleet(bed.Kubeconfig, "precheck", "-f", fleetExample, "-o", format)
			if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "cluster cluster-3: ") {
				t.Errorf("fleet precheck -o %s: exit %d\n%s", format, code, out)
			}
		}
	})

	t.Run("precheck with a cluster unreachable", func(t *testing.T) {
		l := l.with(t)
		kc := unreachableKubeconfig(t, bed, "cluster-2")
		out, code := l.fleet(kc, "precheck", "-f", fleetExample, "-o", "json")
		if code != 1 {
			t.Fatalf("fleet precheck: exit %d, want 1\n%s", code, out)
		}
		var rep struct {
			Results []struct {
				Check, Section, Object, Message, Severity string
				Passed                                    bool
			}
		}
		if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		failed, passed := map[string]bool{}, map[string]bool{}
		for _, r := range rep.Results {
			sec, _, _ := strings.Cut(r.Section, ": ")
			if r.Passed || r.Severity == "info" { // a note fails nothing
				passed[sec] = true
				continue
			}
			failed[sec] = true
			if sec == "cluster cluster-2" && (r.Check != "cluster-reachable" || !strings.Contains(r.Message, "cannot reach it through context cluster-2")) {
				t.Errorf("cluster-2's failure: %+v", r)
			}
		}
		if !failed["cluster cluster-2"] || failed["cluster cluster-1"] || failed["cluster cluster-3"] || !passed["cluster cluster-1"] || !passed["cluster cluster-3"] {
			t.Errorf("failed sections %v, passed %v: want cluster-2 failed and cluster-1 and -3 checked and passing\n%s", failed, passed, out)
		}
	})

	// Install and link by hand, as the dump says.
	var dump struct {
		Clusters []struct {
			Name, Context string
			IstioOperator map[string]any
		}
		Links []struct{ Command string }
	}
	if out, code := l.fleet(bed.Kubeconfig, "dump", "-f", fleetExample, "-o", "json"); code != 0 || json.Unmarshal([]byte(out), &dump) != nil {
		t.Fatalf("fleet dump: exit %d\n%s", code, out)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]string, len(dump.Clusters))
	for i, c := range dump.Clusters {
		b, err := yaml.Marshal(c.IstioOperator)
		if err != nil {
			t.Fatal(err)
		}
		spec := filepath.Join(t.TempDir(), c.Name+".yaml")
		if err := os.WriteFile(spec, b, 0o600); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, errOut, err := harness.Run(t, "--kubeconfig", bed.Kubeconfig, "--context", c.Context, "install", "-y", "-f", spec)
			if err != nil {
				errs[i] = c.Name + ": " + err.Error() + "\n" + out + errOut
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Fatalf("install: %s", e)
		}
	}
	t.Logf("installed 3 clusters in %v", time.Since(start))
	link := func(l *linkBed, command string) {
		args := strings.Fields(strings.TrimPrefix(command, "istioctl "))
		// create-remote-secret --context X ...: the link helper passes the context itself.
		ctx, rest := args[2], append([]string{args[0]}, args[3:]...)
		l.must(ctx, rest...)
	}
	for _, ln := range dump.Links {
		link(l, ln.Command)
	}
	l.collectTokens()

	t.Run("verify passes", func(t *testing.T) {
		l := l.with(t)
		out, code := l.fleet(bed.Kubeconfig, "verify", "-f", fleetExample)
		if code != 0 {
			t.Fatalf("fleet verify: exit %d\n%s", code, out)
		}
		for _, want := range []string{"cluster cluster-1: Link to cluster-3", "cluster cluster-2: Link to cluster-1",
			"Secret/istio-system/istio-remote-secret-cluster-1 in cluster cluster-2: is there", "Every cluster of the fleet is installed, verified and linked"} {
			if !strings.Contains(out, want) {
				t.Errorf("fleet verify says\n%s\nwant %q", out, want)
			}
		}
	})

	ctx := context.Background()
	c1, c2 := l.member("cluster-1"), l.member("cluster-2")
	for _, tc := range []struct {
		name string
		// want are what the report must say, each in the section of the cluster named.
		want         []string
		kubeconfig   func(t *testing.T) string
		breakIt, fix func(t *testing.T, l *linkBed)
	}{
		{name: "a link missing", want: []string{"Secret/istio-system/istio-remote-secret-cluster-3 in cluster cluster-1: is missing"},
			breakIt: func(t *testing.T, l *linkBed) {
				if err := c1.Kube.CoreV1().Secrets("istio-system").Delete(ctx, "istio-remote-secret-cluster-3", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			fix: func(t *testing.T, l *linkBed) {
				link(l, "istioctl create-remote-secret --context cluster-3 --name cluster-3 --apply-to cluster-1")
			}},
		{name: "a reader binding removed", want: []string{"cluster cluster-1: Link to cluster-2", "may do none of the"},
			breakIt: func(t *testing.T, l *linkBed) {
				if err := c2.Kube.RbacV1().ClusterRoleBindings().Delete(ctx, "istio-reader-clusterrole-istio-system", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			fix: func(t *testing.T, l *linkBed) {
				link(l, "istioctl create-remote-secret --context cluster-2 --name cluster-2 --apply-to cluster-1")
			}},
		{name: "a link with the wrong cluster ID", want: []string{"cluster cluster-1: Link to cluster-x", `that cluster calls itself "cluster-2"`},
			breakIt: func(t *testing.T, l *linkBed) {
				link(l, "istioctl create-remote-secret --context cluster-2 --name cluster-x --apply-to cluster-1")
			},
			fix: func(t *testing.T, l *linkBed) {
				if err := c1.Kube.CoreV1().Secrets("istio-system").Delete(ctx, "istio-remote-secret-cluster-x", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a cluster that calls itself otherwise", want: []string{"cluster cluster-2: Drift from the spec", "CLUSTER_ID", "cluster cluster-1: Link to cluster-2", `that cluster calls itself "cluster-9"`},
			breakIt: func(t *testing.T, l *linkBed) { setClusterID(t, c2, "cluster-9") },
			fix:     func(t *testing.T, l *linkBed) { setClusterID(t, c2, "cluster-2") }},
		{name: "a cluster unreachable", want: []string{"cluster cluster-3: Cluster", "cannot reach it through context cluster-3", "cluster cluster-1: ", "cluster cluster-2: "},
			kubeconfig: func(t *testing.T) string { return unreachableKubeconfig(t, bed, "cluster-3") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := l.with(t)
			kc := bed.Kubeconfig
			if tc.kubeconfig != nil {
				kc = tc.kubeconfig(t)
			}
			if tc.breakIt != nil {
				tc.breakIt(t, l)
			}
			out, code := l.fleet(kc, "verify", "-f", fleetExample)
			if code != 1 {
				t.Errorf("fleet verify: exit %d, want 1\n%s", code, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("fleet verify says\n%s\nwant %q", out, want)
				}
			}
			if tc.fix != nil {
				tc.fix(t, l)
				l.collectTokens()
			}
			if out, code := l.fleet(bed.Kubeconfig, "verify", "-f", fleetExample); code != 0 {
				t.Fatalf("fleet verify after the fix: exit %d\n%s", code, out)
			}
		})
	}

	t.Run("no credential printed", func(t *testing.T) {
		l.mu.Lock()
		defer l.mu.Unlock()
		for i, out := range l.outs {
			for tok := range l.tokens {
				if !l.allowed[i] && strings.Contains(out, tok) {
					t.Errorf("output %d holds a token", i)
				}
			}
		}
	})
}

// setClusterID sets the CLUSTER_ID of c's istiod, as an install with another clusterName
// would have.
func setClusterID(t *testing.T, c *cluster.Cluster, id string) {
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
