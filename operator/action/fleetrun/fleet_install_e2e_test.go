package fleetrun_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/action/fleetrun"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
)

// TestFleetInstallE2E: fleet install of the example file on the empty 3-cluster bed, then
// again (nothing written), with cluster-2 dropped from the file (only the links to and from
// it go), with it back, fleet uninstall; then an install during which cluster-3's apiserver
// stops (clusters 1 and 2 converge but for the links that need cluster-3, the result names
// them), converging once it is back; and one stopped by its context, which the same run
// then finishes.
func TestFleetInstallE2E(t *testing.T) {
	b := newFleetBed(t)
	bed := b.bed
	for _, c := range bed.Clusters {
		c.RequireRealIstiod(t)
	}
	ctx := context.Background()
	// The example with one shared cacerts set (spec.trust), as a mesh across clusters has.
	ca := pki.New(t, pki.Valid)
	fleetFile := fleetWithTrust(t, fleetExample, ca)
	dump := fleetDumpOf(t, b, fleetFile)

	t.Run("the plan has each cluster's install and the links; planning writes nothing", func(t *testing.T) {
		before := b.versions()
		p, err := (&fleetrun.Install{Fleet: b.fleet("", fleetFile), ReadinessTimeout: fleetReadiness, Replan: true}).Plan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var members []string
		creates := map[string]int{}
		for _, m := range p.Members {
			members = append(members, m.Name+" "+m.Role)
			if m.Err != nil || m.Install == nil {
				t.Fatalf("cluster %s not planned: %v", m.Name, m.Err)
			}
			s, err := m.Install.Summary(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			creates[m.Name] = s.Counts.Create
		}
		if want := []string{"cluster-1 primary", "cluster-2 primary", "cluster-3 remote"}; p.Fleet != "bed" || !slices.Equal(members, want) {
			t.Errorf("fleet %q plans %v, want bed with %v", p.Fleet, members, want)
		}
		if creates["cluster-1"] != 42 || creates["cluster-2"] != 42 {
			t.Errorf("the primaries' plans create %v, want 42 objects each", creates)
		}
		if !slices.ContainsFunc(p.Links, func(l *fleetrun.LinkPlan) bool {
			return l.Into == "cluster-1" && l.From == "cluster-3" && l.Secret == "istio-system/istio-remote-secret-cluster-3" && l.Action == fleetrun.LinkCreate
		}) {
			t.Errorf("no link of cluster-3's credentials into cluster-1 to create in %+v", p.Links)
		}
		if diff := fleetBedDiff(before, b.versions(), true); len(diff) > 0 {
			t.Errorf("planning changed:\n  %s", strings.Join(diff, "\n  "))
		}
	})

	start := time.Now()
	res, rec := b.installed("of 3 clusters", fleetFile)
	t.Logf("fleet install of 3 clusters: %v", time.Since(start))
	fleetHas(t, "fleet install", res, "cluster-1 primary installed", "cluster-2 primary installed", "cluster-3 remote installed",
		"istio-system/istio-remote-secret-cluster-3 cluster-2 cluster-3 created")
	if len(res.Clusters) != 3 || len(res.Links) != 4 {
		t.Errorf("fleet install: %d clusters, %d links, want 3 and 4", len(res.Clusters), len(res.Links))
	}
	fleetEveryEventInCluster(t, rec.Events)

	t.Run("each cluster as its dumped spec installs it, with exactly the dumped links", func(t *testing.T) {
		b := b.with(t)
		b.verified("", fleetFile)
		for _, c := range dump.Clusters {
			b.verifySpec(c.Context, dump.spec(c.Name))
		}
		dump.linksAsDumped(t, b)
	})

	t.Run("each primary's real istiod syncs every cluster it reads and signs with the shared root", func(t *testing.T) {
		b := b.with(t)
		for _, p := range []string{"cluster-1", "cluster-2"} {
			harness.IstiodLists(t, b.member(p), time.Minute, dump.syncedList(p)...)
			fleetSignsWithRoot(t, b.member(p), ca)
		}
		b.sameAsIstiod(t, "cluster-1", "cluster-2")
		// cluster-1's istiod controls the remote: it hands cluster-3 the shared root and
		// patches its injector's CA bundles with it.
		c3 := b.member("cluster-3")
		fleetRootHanded(t, c3, ca)
		harness.Eventually(t, 30*time.Second, "cluster-3's injector trusts the shared root", func() (bool, string) {
			mwc, err := c3.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "istio-sidecar-injector", metav1.GetOptions{})
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
		fleetInjectsForRemote(t, b.member("cluster-1"), ca, "cluster-3", "network1")
	})

	t.Run("a second install writes nothing", func(t *testing.T) {
		b := b.with(t)
		before := b.versions()
		res, rec := b.installed("again", fleetFile)
		if diff := fleetBedDiff(before, b.versions(), true); len(diff) > 0 {
			t.Errorf("a second fleet install changed:\n  %s", strings.Join(diff, "\n  "))
		}
		// The stream: every event with its cluster, a done per cluster, the fleet's last.
		evs := rec.Events
		fleetEveryEventInCluster(t, evs)
		// A remote's components past its Base start once its primary's istiod is ready, not
		// before: the order of the events, which load cannot change. Its Base starts at once,
		// beside the primary's install (schedule's TestAfterGatesAllButExcept proves that it
		// does not wait; here the gap is only logged, as load moves it).
		pilot, remotePilot, remoteBase := -1, -1, -1
		for i, e := range evs {
			switch {
			case e.Cluster == "cluster-1" && e.Type == event.ComponentReady && e.Component == "Pilot" && pilot < 0:
				pilot = i
			case e.Cluster == "cluster-3" && e.Type == event.ComponentStarted && e.Component == "Pilot" && remotePilot < 0:
				remotePilot = i
			case e.Cluster == "cluster-3" && e.Type == event.ComponentStarted && e.Component == "Base" && remoteBase < 0:
				remoteBase = i
			}
		}
		if pilot < 0 || remoteBase < 0 || remotePilot < pilot || evs[remotePilot].Time.Before(evs[pilot].Time) {
			t.Errorf("cluster-3's Pilot started at event %d, cluster-1's istiod was ready at event %d (cluster-3's Base started at %d)", remotePilot, pilot, remoteBase)
		} else {
			t.Logf("cluster-3's Base started %v before cluster-1's istiod was ready, its Pilot %v after", evs[pilot].Time.Sub(evs[remoteBase].Time), evs[remotePilot].Time.Sub(evs[pilot].Time))
		}
		last := evs[len(evs)-1]
		if last.Type != event.Done || last.Fleet == nil || len(last.Fleet.Clusters) != 3 || len(last.Fleet.Links) != 4 || last.Result == event.RunInterrupted {
			t.Fatalf("the last event is %+v, want the fleet's done", last)
		}
		for _, o := range append(fleetOutcomes(*last.Fleet), fleetOutcomes(res.FleetOutcome)...) {
			if !strings.HasSuffix(o, " "+string(event.ClusterUnchanged)) {
				t.Errorf("%s, want unchanged", o)
			}
		}
	})

	t.Run("cluster-2 dropped from the file: only its links go", func(t *testing.T) {
		b := b.with(t)
		before := b.versions()
		b.installed("without cluster-2", fleetWithout(t, fleetFile, "cluster-2"))
		want := []string{"cluster-1: deleted Secret/istio-system/istio-remote-secret-cluster-2",
			"cluster-2: deleted Secret/istio-system/istio-remote-secret-cluster-1", "cluster-2: deleted Secret/istio-system/istio-remote-secret-cluster-3"}
		if diff := fleetBedDiff(before, b.versions(), false); !slices.Equal(diff, want) {
			t.Errorf("dropping cluster-2 changed (token Secrets aside)\n  %s\nwant\n  %s", strings.Join(diff, "\n  "), strings.Join(want, "\n  "))
		}
		b.verifySpec("cluster-2", dump.spec("cluster-2")) // its control plane stays
		// The istiods follow: cluster-1's reads cluster-2 no more, cluster-2's only itself.
		harness.IstiodLists(t, b.member("cluster-1"), 30*time.Second, "cluster-1  synced", "cluster-3 istio-system/istio-remote-secret-cluster-3 synced")
		harness.IstiodLists(t, b.member("cluster-2"), 30*time.Second, "cluster-2  synced")
		b.sameAsIstiod(t, "cluster-1", "cluster-2")
		back, _ := b.installed("with cluster-2 back", fleetFile)
		fleetHas(t, "fleet install with cluster-2 back", back, "istio-system/istio-remote-secret-cluster-2 cluster-1 cluster-2 created")
		for _, p := range []string{"cluster-1", "cluster-2"} {
			harness.IstiodLists(t, b.member(p), 30*time.Second, dump.syncedList(p)...)
		}
		b.verified("", fleetFile)
	})

	t.Run("a revoked token is a failed link in istiod and remote-clusters", func(t *testing.T) {
		b.with(t).revokedLink(t, fleetFile, dump)
	})

	t.Run("fleet uninstall", func(t *testing.T) {
		b := b.with(t)
		// Ctrl-C (the run's context cancelled) at the first removed object: every member stops
		// between deletes, the fleet's done says interrupted; the same uninstall then converges.
		stopCtx, stop := context.WithCancel(ctx)
		stopped := &event.Recorder{}
		_, err := (&fleetrun.Uninstall{Fleet: b.fleet("", fleetFile), Timeout: fleetReadiness, Events: event.SinkFunc(func(e event.Event) {
			stopped.Emit(e)
			if e.Type == event.Pruned {
				stop()
			}
		})}).Run(stopCtx, nil)
		stop()
		if code := event.ExitCode(err); code != event.ExitInterrupted || len(stopped.Of(event.Pruned)) == 0 {
			t.Errorf("the fleet uninstall stopped at its first removal: exit code %d (%v), %d removed; want %d", code, err, len(stopped.Of(event.Pruned)), event.ExitInterrupted)
		}
		res := b.uninstalled(fleetFile, false)
		fleetHas(t, "fleet uninstall", res, "cluster-1 primary removed", "cluster-2 primary removed", "cluster-3 remote removed")
		for _, c := range bed.Clusters {
			if got := fleetLinkSecrets(t, c); len(got) > 0 {
				t.Errorf("%s still holds the links %v", c.Context, got)
			}
			if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod", metav1.GetOptions{}); err == nil {
				t.Errorf("%s still runs istiod", c.Context)
			}
		}
	})

	t.Run("cluster-3 stops during the install", func(t *testing.T) {
		b := b.with(t)
		kc, proxy := harness.StoppableKubeconfig(t, bed.Kubeconfig, "cluster-3")
		// Stop cluster-3's apiserver (its only way in) once cluster-3's install holds
		// its own lock: its install starts beside its primary's, so this is the one
		// point of it that is the same in every run (the lock taken, maybe part of its Base
		// written). Short lock periods: the next run takes the stopped run's lease over 6 s
		// after its last renewal, by the Lease's own timestamps.
		go harness.WhenLocked(b.member("cluster-3"), proxy.Stop)
		short := &action.LockOptions{Timeout: time.Minute, LeaseDuration: 6 * time.Second, RenewDeadline: 4 * time.Second, RetryPeriod: 200 * time.Millisecond}
		install := func() (*fleetrun.Result, error) {
			f := b.fleet(kc, fleetExample)
			f.Lock = short
			rec := &event.Recorder{}
			res, err := (&fleetrun.Install{Fleet: f, ReadinessTimeout: fleetReadiness, Events: rec}).Run(ctx, nil)
			b.record(rec.Events)
			return res, err
		}
		res, err := install()
		var ferr *fleetrun.Error
		if !errors.As(err, &ferr) {
			t.Fatalf("fleet install with cluster-3 stopping: %v, want a *fleetrun.Error", err)
		}
		fleetHas(t, "fleet install with cluster-3 stopping", res, "cluster-1 primary installed", "cluster-2 primary installed",
			"istio-system/istio-remote-secret-cluster-1 cluster-2 cluster-1 created", "istio-system/istio-remote-secret-cluster-2 cluster-1 cluster-2 created")
		failed := strings.Join(ferr.Failed, "\n")
		for _, want := range []string{"cluster cluster-3 failed",
			"link istio-system/istio-remote-secret-cluster-3 in cluster cluster-1 (cluster-3's credentials) left-out: needs cluster cluster-3",
			"link istio-system/istio-remote-secret-cluster-3 in cluster cluster-2 (cluster-3's credentials) left-out: needs cluster cluster-3"} {
			if !strings.Contains(failed, want) {
				t.Errorf("fleet install with cluster-3 stopping names\n%s\nwant %q", failed, want)
			}
		}
		proxy.Start(t)
		res, err = install()
		if err != nil {
			t.Fatalf("fleet install once cluster-3 is back: %v", err)
		}
		fleetHas(t, "fleet install once cluster-3 is back", res, "cluster-3 remote installed")
		if res := b.verify(kc, fleetExample); res.Failed {
			t.Fatalf("fleet verify:\n%s", fleetFailures(res.Report))
		}
	})

	t.Run("a stopped install stops every cluster, the same run then converges", func(t *testing.T) {
		b := b.with(t)
		b.uninstalled(fleetFile, false)
		stopped, cancel := context.WithCancel(ctx)
		defer cancel()
		go harness.WhenLocked(b.member("cluster-1"), cancel)
		_, rec, err := b.install(stopped, "", fleetFile)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted fleet install: %v, want context.Canceled", err)
		}
		if d := rec.Of(event.Done); len(d) == 0 || d[len(d)-1].Cluster != "" || d[len(d)-1].Result != event.RunInterrupted {
			t.Fatalf("the interrupted run's last done: %s, want the fleet's, interrupted", fmt.Sprint(d))
		}
		b.installed("after the interrupted one", fleetFile)
		b.verified("", fleetFile)
	})

	t.Run("no credential said", func(t *testing.T) { b.noCredentialSaid(t) })
}
