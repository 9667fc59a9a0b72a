package action_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/objdiff"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// translateExceptions are the objects istioctl and Helm render differently from the
// translated values (docs/migrate.md), each with what may differ: the istiod values
// ConfigMap records the values it was rendered with, and the translated ones add
// global.releaseLabel. istioctl's ownership labels and annotations differ on the live
// objects only: both renders carry the same.
var translateExceptions = map[string]func(*testing.T, *unstructured.Unstructured) *unstructured.Unstructured{
	"ConfigMap/istio-system/values": withoutReleaseLabel,
}

// withoutReleaseLabel is a values ConfigMap without global.releaseLabel in the values it
// records, each as indented JSON.
func withoutReleaseLabel(t *testing.T, o *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	o = o.DeepCopy()
	data, _, _ := unstructured.NestedStringMap(o.Object, "data")
	for k, v := range data {
		var vals map[string]any
		if err := json.Unmarshal([]byte(v), &vals); err != nil {
			t.Fatalf("%s: data %s: %v", ref.Of(o).String(), k, err)
		}
		unstructured.RemoveNestedField(vals, "global", "releaseLabel")
		b, err := json.MarshalIndent(vals, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		data[k] = string(b)
	}
	if err := unstructured.SetNestedStringMap(o.Object, data, "data"); err != nil {
		t.Fatal(err)
	}
	return o
}

// byIdentity indexes objects by group, kind, namespace and name, each as plain JSON.
func byIdentity(t *testing.T, what string, objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		b, err := json.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		n := &unstructured.Unstructured{}
		if err := n.UnmarshalJSON(b); err != nil {
			t.Fatal(err)
		}
		k := o.GroupVersionKind().Group + " " + ref.Of(o).String()
		if _, dup := out[k]; dup {
			t.Errorf("%s renders %s twice", what, ref.Of(o).String())
		}
		out[k] = n
	}
	return out
}

// TestTranslateHelmTemplate: for every profile, helm template of our charts with the
// values manifest translate writes (each release as its install script names it) gives
// the objects manifest generate gives, but for translateExceptions.
func TestTranslateHelmTemplate(t *testing.T) {
	profiles, err := filepath.Glob("../../profiles/*.yaml")
	if err != nil || len(profiles) < 5 {
		t.Fatalf("profiles: %v %v", profiles, err)
	}
	for _, p := range profiles {
		profile := strings.TrimSuffix(filepath.Base(p), ".yaml")
		t.Run(profile, func(t *testing.T) {
			if profile == "empty" {
				// Nothing to render, nothing to translate.
				tr, err := (&action.ManifestTranslate{Config: &action.Config{}, Spec: spec.Options{Sets: []string{"profile=empty"}}}).Run(context.Background())
				if objs := generate(t, "profile=empty"); err != nil || len(objs) > 0 || len(tr.Releases) > 0 {
					t.Errorf("profile empty: %d objects, translated %+v (%v)", len(objs), tr, err)
				}
				return
			}
			h := newHelmRun(t, "")
			want := generate(t, "profile="+profile)
			dir, rels := translateTo(t, "profile="+profile)
			var got []*unstructured.Unstructured
			for _, r := range rels {
				out := h.ok("helm", "template", r.name, filepath.Join(dir, "charts", r.chart), "--namespace", r.namespace,
					"-f", filepath.Join(dir, r.values), "--include-crds", "--kube-version", render.DefaultKubeVersion)
				objs, err := render.ParseObjects([]byte(out))
				if err != nil {
					t.Fatalf("helm template %s: %v", r.name, err)
				}
				got = append(got, objs...)
			}
			g, w := byIdentity(t, "helm template", got), byIdentity(t, "manifest generate", want)
			var missing, extra, differ, excepted []string
			for k, o := range w {
				name := ref.Of(o).String()
				p, ok := g[k]
				switch {
				case !ok:
					missing = append(missing, name)
				case translateExceptions[name] != nil:
					// Only what the exception allows may differ.
					if e, h := translateExceptions[name](t, o), translateExceptions[name](t, p); !reflect.DeepEqual(e.Object, h.Object) {
						d, _ := objdiff.Diff(e, h)
						differ = append(differ, name+" (beyond what the exception allows)\n"+d)
					}
					excepted = append(excepted, name)
				case !reflect.DeepEqual(o.Object, p.Object):
					d, _ := objdiff.Diff(o, p)
					differ = append(differ, name+"\n"+d)
				}
			}
			for k, o := range g {
				if _, ok := w[k]; !ok {
					extra = append(extra, ref.Of(o).String())
				}
			}
			sort.Strings(missing)
			sort.Strings(extra)
			sort.Strings(differ)
			if len(missing)+len(extra)+len(differ) > 0 {
				t.Errorf("helm template of the translated values is not manifest generate's output:\nmissing: %v\nextra: %v\ndiffering:\n%s",
					missing, extra, strings.Join(differ, "\n"))
			}
			// eastwest is one gateway: its Deployment, Service, ServiceAccount, HPA, Role and
			// binding.
			least := 10
			if profile == "eastwest" {
				least = 6
			}
			if len(w) < least {
				t.Errorf("compared only %d objects", len(w))
			}
			t.Logf("%d objects the same in %d releases; excepted: %v", len(w)-len(excepted), len(rels), excepted)
		})
	}
}

func purge(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	if _, err := (&action.Uninstall{Config: config(c), Purge: true, Timeout: 2 * time.Minute}).Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

// install runs an install of sets to its end and returns its events.
func installWith(t *testing.T, c *cluster.Cluster, in action.Install, sets ...string) *event.Recorder {
	t.Helper()
	rec := &event.Recorder{}
	in.Config, in.Spec, in.ReadinessTimeout, in.Events = config(c), spec.Options{Sets: sets}, 5*time.Minute, rec
	if _, err := in.Run(context.Background(), nil); err != nil {
		t.Fatalf("install %v: %v\n%s", sets, err, messages(rec, event.Warning))
	}
	return rec
}

// TestMigrateIstioctlToHelmE2E: an istioctl install of demo moved under Helm by the
// translate scripts, run with the helm CLI: no object is recreated, helm list shows every
// release deployed, and a helm upgrade with the same values changes nothing.
func TestMigrateIstioctlToHelmE2E(t *testing.T) {
	c := cluster.Get(t)
	h := newHelmRun(t, c.Kubeconfig)
	client := harness.Client(t, c)
	lap := stopwatch(t)
	purge(t, c)
	lap("purge")
	t.Cleanup(func() {
		// Our charts label every object for a purge; the release records go with it.
		purge(t, c)
		_ = c.Kube.CoreV1().Secrets("istio-system").DeleteCollection(context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: "owner=helm"})
	})

	installWith(t, c, action.Install{}, "profile=demo")
	objs := generate(t, "profile=demo")
	uids, _ := liveIdentities(t, client, objs)
	lap("istioctl install demo")

	dir, rels := translateTo(t, "profile=demo")
	var names []string
	for _, r := range rels {
		h.ok("bash", filepath.Join(dir, r.script))
		names = append(names, r.namespace+"/"+r.name)
	}
	lap("translate and the scripts")
	if want := []string{"istio-system/base", "istio-system/pilot", "istio-system/istio-ingressgateway", "istio-system/istio-egressgateway"}; !reflect.DeepEqual(names, want) {
		t.Errorf("releases %v, want %v", names, want)
	}
	after, _ := liveIdentities(t, client, objs)
	if d := changed(uids, after); len(d) > 0 {
		t.Errorf("moving under Helm recreated objects (their UIDs changed): %v", d)
	}
	listed := h.releases()
	for _, n := range names {
		if listed[n] != "deployed" {
			t.Errorf("helm list: %s is %q, want deployed (all: %v)", n, listed[n], listed)
		}
	}
	if len(listed) != len(names) {
		t.Errorf("helm list shows %v, want exactly %v", listed, names)
	}

	// kwok runs no istiod: do what it does once it serves, which the chart leaves to it on an
	// upgrade (it renders the validator's failurePolicy only on install, fail-open).
	validators := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	vwc, err := validators.Get(context.Background(), "istio-validator-istio-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fail := admissionregistrationv1.Fail
	for i := range vwc.Webhooks {
		vwc.Webhooks[i].FailurePolicy = &fail
	}
	if _, err := validators.Update(context.Background(), vwc, metav1.UpdateOptions{FieldManager: "pilot-discovery"}); err != nil {
		t.Fatal(err)
	}

	// The same values again: Helm finds nothing to change.
	versions := settledVersions(t, client, objs)
	lap("settle")
	for _, r := range rels {
		h.ok("helm", "upgrade", r.name, filepath.Join(dir, "charts", r.chart), "--namespace", r.namespace, "-f", filepath.Join(dir, r.values))
	}
	lap("helm upgrade")
	if _, now := liveIdentities(t, client, objs); len(changed(versions, now)) > 0 {
		t.Errorf("helm upgrade with the same values changed objects: %v", changed(versions, now))
	}
	for n, status := range h.releases() {
		if status != "deployed" {
			t.Errorf("after helm upgrade, %s is %q", n, status)
		}
	}
}

// TestMigrateHelmToIstioctlE2E: upstream's base and istio-discovery charts installed with
// the helm CLI, as a new user would, then taken over by an install with TakeOwnership. A
// dry run with RetireHelmReleases lists the release records it would delete and writes
// nothing; without it the install warns, naming both releases, and helm list still shows
// them; with it, stopped (Ctrl-C) once the first release is retired, the other is left, and
// the same install run again retires it: no object is recreated, helm list is empty and
// verify-install passes.
func TestMigrateHelmToIstioctlE2E(t *testing.T) {
	c := cluster.Get(t)
	h := newHelmRun(t, c.Kubeconfig)
	client := harness.Client(t, c)
	lap := stopwatch(t)
	upstreamReleases(t, c, h)
	releases := []string{"istio-system/istio-base", "istio-system/istiod"}
	objs := append(releaseObjects(t, h, client, "istio-base", "istio-system"), releaseObjects(t, h, client, "istiod", "istio-system")...)
	uids, _ := liveIdentities(t, client, objs)
	if len(uids) < 20 {
		t.Fatalf("the Helm releases hold only %d objects", len(uids))
	}
	lap("helm install")

	rec := installWith(t, c, action.Install{TakeOwnership: true, RetireHelmReleases: true, DryRun: true}, "profile=minimal")
	mustContain(t, "the dry run's retired events", messages(rec, event.HelmReleaseRetired),
		"istio-system/istio-base would be retired", "Secret/istio-system/sh.helm.release.v1.istio-base.v1",
		"istio-system/istiod would be retired", "Secret/istio-system/sh.helm.release.v1.istiod.v1")
	if got := h.releases(); len(got) != 2 {
		t.Errorf("after the dry run helm list shows %v, want both releases", got)
	}
	lap("dry run")

	rec = installWith(t, c, action.Install{TakeOwnership: true}, "profile=minimal")
	mustContain(t, "the warnings without RetireHelmReleases", messages(rec, event.Warning),
		"Helm release(s) "+strings.Join(releases, ", ")+" still list objects this install owns", action.RetireHelmReleasesFlag)
	if got := h.releases(); got[releases[0]] != "deployed" || got[releases[1]] != "deployed" {
		t.Errorf("without RetireHelmReleases helm list shows %v, want both releases deployed", got)
	}
	if n := len(rec.Of(event.HelmReleaseRetired)); n > 0 {
		t.Errorf("without RetireHelmReleases %d release(s) were retired", n)
	}
	lap("install without retiring")

	// Ctrl-C (the run's context cancelled) once the first release is retired: the second is
	// left to the same install run again.
	ctx, stop := context.WithCancel(context.Background())
	stopped := &event.Recorder{}
	in := action.Install{Config: config(c), Spec: spec.Options{Sets: []string{"profile=minimal"}}, ReadinessTimeout: 5 * time.Minute,
		TakeOwnership: true, RetireHelmReleases: true, Events: event.SinkFunc(func(e event.Event) {
			stopped.Emit(e)
			if e.Type == event.HelmReleaseRetired {
				stop()
			}
		})}
	_, err := in.Run(ctx, nil)
	stop()
	if code := event.ExitCode(err); code != event.ExitInterrupted {
		t.Errorf("the install stopped at its first retired release: exit code %d (%v), want %d", code, err, event.ExitInterrupted)
	}
	if got := h.releases(); len(stopped.Of(event.HelmReleaseRetired)) != 1 || len(got) != 1 {
		t.Fatalf("stopped at the first retired release: %d retired, helm list shows %v; want 1 and the other", len(stopped.Of(event.HelmReleaseRetired)), got)
	}
	lap("install stopped while retiring")

	rec = installWith(t, c, action.Install{TakeOwnership: true, RetireHelmReleases: true}, "profile=minimal")
	retired := messages(stopped, event.HelmReleaseRetired) + messages(rec, event.HelmReleaseRetired)
	mustContain(t, "the retired events of both runs", retired, "istio-system/istio-base retired", "istio-system/istiod retired")
	if w := messages(rec, event.Warning); strings.Contains(w, "still list objects") {
		t.Errorf("the retiring install still warns about the releases:\n%s", w)
	}
	if got := h.releases(); len(got) != 0 {
		t.Errorf("after retiring, helm list shows %v", got)
	}
	lap("install retiring")
	after, _ := liveIdentities(t, client, objs)
	if d := changed(uids, after); len(d) > 0 {
		t.Errorf("the takeover recreated objects (their UIDs changed): %v", d)
	}
	for _, o := range objs {
		live, _ := client.Get(context.Background(), o)
		if a := live.GetAnnotations(); a["meta.helm.sh/release-name"] != "" {
			t.Errorf("%s still names Helm release %s", ref.Of(o).String(), a["meta.helm.sh/release-name"])
		}
	}
	res, err := (&action.Check{Config: config(c), Command: "verify-install", Spec: &spec.Options{Sets: []string{"profile=minimal"}}}).Run(context.Background())
	if err != nil || res.Failed {
		t.Errorf("verify-install after the takeover: %v %+v", err, res)
	}
}
