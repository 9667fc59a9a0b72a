package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
)

// TestFleetInstallE2E: x fleet install of the example file on the empty 3-cluster bed,
// then again (nothing written), with cluster-2 dropped from the file (only the links to and
// from it go), with it back, fleet uninstall; then an install during which cluster-3's
// apiserver stops (clusters 1 and 2 converge but for the links that need cluster-3, the
// exit names them), converging once it is back.
func TestFleetInstallE2E(t *testing.T) {
	bed := cluster.GetBed(t, 3)
	l := &linkBed{t: t, bed: bed, seen: &seen{allowed: map[int]bool{}, tokens: map[string]bool{}}}
	l.purgeBed()
	t.Cleanup(l.purgeBed)
	for _, c := range bed.Clusters {
		c.RequireRealIstiod(t)
	}
	// The example with one shared cacerts set (spec.trust), as a mesh across clusters has.
	ca := pki.New(t, pki.Valid)
	fleetFile := withTrust(t, fleetExample, ca)
	dump := fleetDump(t, l, fleetFile)

	t.Run("the prompt shows each cluster's plan and the links; no writes nothing", func(t *testing.T) {
		before := bedVersions(t, bed)
		out, errOut, err := harness.Asking(t, "n\n", "--kubeconfig", bed.Kubeconfig, "x", "fleet", "install", "-f", fleetFile)
		l.record(false, out, errOut)
		if err == nil {
			t.Fatalf("answering n: no error\n%s", out)
		}
		for _, want := range []string{"Cluster cluster-1 (primary):", "Cluster cluster-3 (remote):", "Plan: 42 to create", "Links:",
			"+ istio-system/istio-remote-secret-cluster-3 in cluster-1, cluster-3's credentials: to create", `install fleet "bed" into 3 clusters`} {
			if !strings.Contains(out, want) {
				t.Errorf("the prompt says\n%s\nwant %q", out, want)
			}
		}
		if diff := bedDiff(before, bedVersions(t, bed)); len(diff) > 0 {
			t.Errorf("answering n changed:\n  %s", strings.Join(diff, "\n  "))
		}
	})

	start := time.Now()
	out, code := l.fleet(bed.Kubeconfig, "install", "-f", fleetFile, "-y")
	if code != 0 {
		t.Fatalf("fleet install: exit %d\n%s", code, out)
	}
	t.Logf("fleet install of 3 clusters: %v\n%s", time.Since(start), out)
	for _, want := range []string{"[cluster-1] ", "[cluster-3] ", "CLUSTER", "cluster-3  remote", "istio-system/istio-remote-secret-cluster-3  cluster-2  cluster-3  created",
		"Fleet install complete (3 clusters, 4 links)"} {
		if !strings.Contains(out, want) {
			t.Errorf("fleet install says\n%s\nwant %q", out, want)
		}
	}

	t.Run("each cluster as its dumped spec installs it, with exactly the dumped links", func(t *testing.T) {
		l := l.with(t)
		if out, code := l.fleet(bed.Kubeconfig, "verify", "-f", fleetFile); code != 0 {
			t.Fatalf("fleet verify: exit %d\n%s", code, out)
		}
		for _, c := range dump.Clusters {
			l.must(c.Context, "verify-install", "-f", c.spec)
			if got, want := linkSecrets(t, l.member(c.Context)), dump.linksInto(c.Name); !slices.Equal(got, want) {
				t.Errorf("%s holds the links %v, fleet dump lists %v", c.Name, got, want)
			}
		}
	})

	t.Run("each primary's real istiod syncs every cluster it reads and signs with the shared root", func(t *testing.T) {
		l := l.with(t)
		for _, p := range []string{"cluster-1", "cluster-2"} {
			istiodLists(t, l.member(p), time.Minute, syncedList(dump, p)...)
			signsWithRoot(t, l.member(p), ca)
		}
		sameAsIstiod(t, l, "cluster-1", "cluster-2")
		// cluster-1's istiod controls the remote: it hands cluster-3 the shared root and
		// patches its injector's CA bundles with it.
		c3 := l.member("cluster-3")
		harness.Eventually(t, 30*time.Second, "cluster-3's istio-ca-root-cert is the shared root", func() (bool, string) {
			cm, err := c3.Kube.CoreV1().ConfigMaps("default").Get(context.Background(), "istio-ca-root-cert", metav1.GetOptions{})
			return err == nil && cm.Data["root-cert.pem"] == string(ca.RootPEM), fmt.Sprint(err)
		})
		harness.Eventually(t, 30*time.Second, "cluster-3's injector trusts the shared root", func() (bool, string) {
			mwc, err := c3.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(context.Background(), "istio-sidecar-injector", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, w := range mwc.Webhooks {
				if string(w.ClientConfig.CABundle) != string(ca.RootPEM) {
					return false, "webhook " + w.Name + " has another CA bundle"
				}
			}
			return len(mwc.Webhooks) > 0, "no webhooks"
		})
		// What cluster-3's injector calls, cluster-1's istiod serves: it injects a pod of
		// cluster-3 as one (the hop between them, the east-west gateway, is not in the bed).
		injectsForRemote(t, l.member("cluster-1"), ca, "cluster-3", "network1")
	})

	t.Run("a second install writes nothing", func(t *testing.T) {
		l := l.with(t)
		before := bedVersions(t, bed)
		out, code := l.fleet(bed.Kubeconfig, "install", "-f", fleetFile, "-y", "-o", "json")
		if code != 0 {
			t.Fatalf("fleet install again: exit %d\n%s", code, out)
		}
		if diff := bedDiff(before, bedVersions(t, bed)); len(diff) > 0 {
			t.Errorf("a second fleet install changed:\n  %s\n%s", strings.Join(diff, "\n  "), out)
		}
		// As recorded (testdata/events; -update re-records), byte for
		// byte once what varies run to run is masked.
		want := recording(t, "fleet-install-unchanged", out)
		if w, got := streamForm(t, string(want)), streamForm(t, out); strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Errorf("the stream differs from its recording:\n%s", firstDifference(w, got))
		}
		// The stream: every event with its cluster, a done per cluster, the fleet's last.
		var evs []event.Event
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var e event.Event
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("not an event: %q: %v", line, err)
			}
			evs = append(evs, e)
		}
		dones := map[string]int{}
		for i, e := range evs {
			if e.Cluster == "" && i != len(evs)-1 {
				t.Errorf("event %d has no cluster: %+v", i, e)
			}
			if e.Type == event.Done {
				dones[e.Cluster]++
			}
		}
		// A remote's install starts once its primary's istiod is ready, not before: the order
		// of the events, which load cannot change. The gap is only logged: it waits on the
		// readiness hook cluster-1's install ends, which in this unchanged run comes ~0.1 s
		// before that install's done, so no bound on it could tell the hook from the done,
		// and load stretches it (it once held a 1 s bound).
		pilot, remote := -1, -1
		for i, e := range evs {
			if e.Cluster == "cluster-1" && e.Type == event.ComponentReady && e.Component == "Pilot" && pilot < 0 {
				pilot = i
			}
			if e.Cluster == "cluster-3" && e.Type == event.Plan && remote < 0 {
				remote = i
			}
		}
		if pilot < 0 || remote < pilot || evs[remote].Time.Before(evs[pilot].Time) {
			t.Errorf("cluster-3's install began at event %d, cluster-1's istiod was ready at event %d", remote, pilot)
		} else {
			t.Logf("cluster-3's install began %v after cluster-1's istiod was ready", evs[remote].Time.Sub(evs[pilot].Time))
		}
		last := evs[len(evs)-1]
		if want := map[string]int{"cluster-1": 1, "cluster-2": 1, "cluster-3": 1, "": 1}; !maps.Equal(dones, want) {
			t.Errorf("done events per cluster %v, want %v", dones, want)
		}
		if last.Type != event.Done || last.Fleet == nil || len(last.Fleet.Clusters) != 3 || len(last.Fleet.Links) != 4 || last.ExitCode == nil || *last.ExitCode != 0 {
			t.Fatalf("the last event is %+v, want the fleet's done", last)
		}
		for _, c := range last.Fleet.Clusters {
			if c.Outcome != event.OutcomeUnchanged {
				t.Errorf("cluster %s: %s, want unchanged", c.Cluster, c.Outcome)
			}
		}
		for _, ln := range last.Fleet.Links {
			if ln.Outcome != event.OutcomeUnchanged {
				t.Errorf("link %s in %s: %s, want unchanged", ln.Secret, ln.Into, ln.Outcome)
			}
		}
	})

	t.Run("cluster-2 dropped from the file: only its links go", func(t *testing.T) {
		l := l.with(t)
		before := bedVersions(t, bed)
		out, code := l.fleet(bed.Kubeconfig, "install", "-f", fleetWithout(t, fleetFile, "cluster-2"), "-y")
		if code != 0 {
			t.Fatalf("fleet install without cluster-2: exit %d\n%s", code, out)
		}
		var diff []string
		for _, d := range bedDiff(before, bedVersions(t, bed)) {
			if !isTokenSecret(d) {
				diff = append(diff, d)
			}
		}
		want := []string{"cluster-1: deleted Secret/istio-system/istio-remote-secret-cluster-2",
			"cluster-2: deleted Secret/istio-system/istio-remote-secret-cluster-1", "cluster-2: deleted Secret/istio-system/istio-remote-secret-cluster-3"}
		if !slices.Equal(diff, want) {
			t.Errorf("dropping cluster-2 changed (token Secrets aside)\n  %s\nwant\n  %s\n%s", strings.Join(diff, "\n  "), strings.Join(want, "\n  "), out)
		}
		l.must("cluster-2", "verify-install", "-f", dump.cluster("cluster-2").spec) // its control plane stays
		// The istiods follow: cluster-1's reads cluster-2 no more, cluster-2's only itself.
		istiodLists(t, l.member("cluster-1"), 30*time.Second, "cluster-1  synced", "cluster-3 istio-system/istio-remote-secret-cluster-3 synced")
		istiodLists(t, l.member("cluster-2"), 30*time.Second, "cluster-2  synced")
		sameAsIstiod(t, l, "cluster-1", "cluster-2")
		out, code = l.fleet(bed.Kubeconfig, "install", "-f", fleetFile, "-y")
		if code != 0 || !strings.Contains(out, "istio-remote-secret-cluster-2  cluster-1  cluster-2  created") {
			t.Fatalf("fleet install with cluster-2 back: exit %d\n%s", code, out)
		}
		for _, p := range []string{"cluster-1", "cluster-2"} {
			istiodLists(t, l.member(p), 30*time.Second, syncedList(dump, p)...)
		}
		if out, code := l.fleet(bed.Kubeconfig, "verify", "-f", fleetFile); code != 0 {
			t.Fatalf("fleet verify: exit %d\n%s", code, out)
		}
	})

	t.Run("a revoked token is a failed link in istiod and remote-clusters", func(t *testing.T) {
		revokedLink(t, l.with(t), fleetFile, dump)
	})

	t.Run("fleet uninstall", func(t *testing.T) {
		l := l.with(t)
		out, code := l.fleet(bed.Kubeconfig, "uninstall", "-f", fleetFile, "-y")
		if code != 0 || !strings.Contains(out, "Fleet uninstall complete") {
			t.Fatalf("fleet uninstall: exit %d\n%s", code, out)
		}
		for _, c := range bed.Clusters {
			if got := linkSecrets(t, c); len(got) > 0 {
				t.Errorf("%s still holds the links %v", c.Context, got)
			}
			if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(context.Background(), "istiod", metav1.GetOptions{}); err == nil {
				t.Errorf("%s still runs istiod", c.Context)
			}
		}
	})

	t.Run("cluster-3 stops during the install", func(t *testing.T) {
		l := l.with(t)
		kc, proxy := harness.StoppableKubeconfig(t, bed.Kubeconfig, "cluster-3")
		// Stop cluster-3's apiserver (its only way in) once cluster-1's install holds
		// cluster-1's lock: every cluster is planned by then, nothing of cluster-3 written.
		// The example without cacerts: with them every cluster takes its lock first to
		// write its cacerts, and cluster-3 could be stopped half-way through taking it.
		go whenLocked(l.member("cluster-1"), proxy.Stop)
		out, code := l.fleet(kc, "install", "-f", fleetExample, "-y")
		t.Logf("fleet install with cluster-3 stopping:\n%s", out)
		if code != 1 {
			t.Fatalf("fleet install with cluster-3 stopping: exit %d, want 1\n%s", code, out)
		}
		for _, want := range []string{"cluster-1  primary  installed", "cluster-2  primary  installed", "cluster cluster-3 failed",
			"link istio-system/istio-remote-secret-cluster-3 in cluster cluster-1 (cluster-3's credentials) left-out: needs cluster cluster-3",
			"link istio-system/istio-remote-secret-cluster-3 in cluster cluster-2 (cluster-3's credentials) left-out: needs cluster cluster-3",
			"istio-remote-secret-cluster-1  cluster-2  cluster-1  created", "istio-remote-secret-cluster-2  cluster-1  cluster-2  created"} {
			if !strings.Contains(out, want) {
				t.Errorf("fleet install with cluster-3 stopping says\n%s\nwant %q", out, want)
			}
		}
		proxy.Start(t)
		out, code = l.fleet(kc, "install", "-f", fleetExample, "-y")
		if code != 0 || !strings.Contains(out, "cluster-3  remote   installed") {
			t.Fatalf("fleet install once cluster-3 is back: exit %d\n%s", code, out)
		}
		if out, code := l.fleet(kc, "verify", "-f", fleetExample); code != 0 {
			t.Fatalf("fleet verify: exit %d\n%s", code, out)
		}
	})

	t.Run("ctrl-c stops every cluster, the same command then converges", func(t *testing.T) {
		l := l.with(t)
		if out, code := l.fleet(bed.Kubeconfig, "uninstall", "-f", fleetFile, "-y"); code != 0 {
			t.Fatalf("fleet uninstall: exit %d\n%s", code, out)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			whenLocked(l.member("cluster-1"), cancel)
		}()
		r := harness.Istioctl{T: t, Kubeconfig: bed.Kubeconfig, Ctx: ctx}.Run("x", "fleet", "install", "-f", fleetFile, "-y")
		l.record(false, r.Stdout, r.Stderr)
		if code := r.Code; code != 130 || !strings.Contains(r.Stdout, "Fleet install interrupted") {
			t.Fatalf("interrupted fleet install: exit %d (%v), want 130\n%s", code, r.Err, r.Stdout)
		}
		if out, code := l.fleet(bed.Kubeconfig, "install", "-f", fleetFile, "-y"); code != 0 {
			t.Fatalf("fleet install after the interrupted one: exit %d\n%s", code, out)
		}
		if out, code := l.fleet(bed.Kubeconfig, "verify", "-f", fleetFile); code != 0 {
			t.Fatalf("fleet verify: exit %d\n%s", code, out)
		}
	})

	t.Run("no credential printed", func(t *testing.T) {
		l.collectTokens()
		l.mu.Lock()
		defer l.mu.Unlock()
		for i, out := range l.outs {
			for tok := range l.tokens {
				if strings.Contains(out, tok) {
					t.Errorf("output %d holds a token", i)
				}
			}
		}
	})
}

// whenLocked calls fn once an istioctl holds c's cluster lock (within two minutes).
func whenLocked(c *cluster.Cluster, fn func()) {
	err := harness.Within(2*time.Minute, 20*time.Millisecond, func() (bool, string) {
		le, err := c.Kube.CoordinationV1().Leases("kube-system").Get(context.Background(), "istioctl-lock", metav1.GetOptions{})
		return err == nil && le.Spec.HolderIdentity != nil && *le.Spec.HolderIdentity != "", ""
	})
	if err == nil {
		fn()
	}
}

// fleetDumped is what fleet dump says, each cluster's IstioOperator written to a file.
type fleetDumped struct {
	Clusters []fleetDumpedCluster
	Links    []struct{ Secret, Into string }
}

type fleetDumpedCluster struct {
	Name, Context string
	IstioOperator map[string]any
	spec          string
}

func fleetDump(t *testing.T, l *linkBed, file string) *fleetDumped {
	t.Helper()
	d := &fleetDumped{}
	if out, code := l.fleet(l.bed.Kubeconfig, "dump", "-f", file, "-o", "json"); code != 0 || json.Unmarshal([]byte(out), d) != nil {
		t.Fatalf("fleet dump: exit %d\n%s", code, out)
	}
	for i, c := range d.Clusters {
		b, err := yaml.Marshal(c.IstioOperator)
		if err != nil {
			t.Fatal(err)
		}
		d.Clusters[i].spec = filepath.Join(t.TempDir(), c.Name+".yaml")
		if err := os.WriteFile(d.Clusters[i].spec, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func (d *fleetDumped) cluster(name string) fleetDumpedCluster {
	for _, c := range d.Clusters {
		if c.Name == name {
			return c
		}
	}
	panic("no cluster " + name)
}

// linksInto are the namespace/name of the links the dump puts into cluster, sorted.
func (d *fleetDumped) linksInto(cluster string) []string {
	var out []string
	for _, l := range d.Links {
		if l.Into == cluster {
			out = append(out, l.Secret)
		}
	}
	sort.Strings(out)
	return out
}

// linkSecrets are the link Secrets (istio/multiCluster=true) c holds, sorted.
func linkSecrets(t *testing.T, c *cluster.Cluster) []string {
	t.Helper()
	list, err := c.Kube.CoreV1().Secrets("").List(context.Background(), metav1.ListOptions{LabelSelector: "istio/multiCluster=true"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		out = append(out, s.Namespace+"/"+s.Name)
	}
	sort.Strings(out)
	return out
}

// bedVersions are objectVersions of every bed cluster, keyed by context.
func bedVersions(t *testing.T, bed *cluster.Bed) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, c := range bed.Clusters {
		out[c.Context] = harness.ObjectVersions(t, c)
	}
	return out
}

// bedDiff is versionsDiff per cluster, each line prefixed with its context, sorted.
func bedDiff(before, after map[string]map[string]string) []string {
	var out []string
	for ctx, b := range before {
		for _, d := range harness.VersionsDiff(b, after[ctx]) {
			out = append(out, ctx+": "+d)
		}
	}
	sort.Strings(out)
	return out
}

// isTokenSecret says a diff line is about a reader token Secret (their names are generated).
func isTokenSecret(diff string) bool {
	return strings.Contains(diff, "Secret/istio-system/istio-reader-service-account-istio-remote-secret-token")
}

// fleetWithout is the fleet file without the named clusters, beside it (its cacerts
// directory is relative to it).
func fleetWithout(t *testing.T, file string, names ...string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	spec := f["spec"].(map[string]any)
	var kept []any
	for _, c := range spec["clusters"].([]any) {
		if !slices.Contains(names, c.(map[string]any)["name"].(string)) {
			kept = append(kept, c)
		}
	}
	spec["clusters"] = kept
	out, err := yaml.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(filepath.Dir(file), "fleet-without-"+strings.Join(names, "-")+".yaml")
	if err := os.WriteFile(p, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
