package action_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

// TestRevisionListE2E: revisions a (built as 1.29.4) and b (1.30.0), the default tag on a
// and tag prod on b, pods injected by the real istiod in four namespaces (the default tag,
// a named tag, istio.io/rev naming the revision, istio-injection=enabled): RevisionList (x
// revision list) names every namespace and pod under the revision that injects it, and
// marks a proxy out of skew. Its text and JSON are pkg/printer's TestRevisionsText.
func TestRevisionListE2E(t *testing.T) {
	c := purged(t)
	c.RequireRealIstiod(t)
	revMustInstall(t, c, "1.29.4", "a", "profile=minimal")
	revMustInstall(t, c, "1.30.0", "b", "profile=minimal")
	revTag(t, c, "default", "a")
	revTag(t, c, "prod", "b")

	type where struct{ rev, label, tag, version string }
	byTag := harness.LabelledNamespace(t, c, map[string]string{"istio.io/rev": "default"})
	named := harness.LabelledNamespace(t, c, map[string]string{"istio.io/rev": "prod"})
	direct := harness.LabelledNamespace(t, c, map[string]string{"istio.io/rev": "b"})
	enabled := harness.LabelledNamespace(t, c, map[string]string{"istio-injection": "enabled"})
	want := map[string]where{
		byTag:   {"a", "istio.io/rev=default", "default", "1.29.4"},
		named:   {"b", "istio.io/rev=prod", "prod", "1.30.0"},
		direct:  {"b", "istio.io/rev=b", "", "1.30.0"},
		enabled: {"a", "istio-injection=enabled", "default", "1.29.4"},
	}
	for ns, w := range want {
		if got := revInjectedBy(t, c, ns); got != w.rev {
			t.Fatalf("namespace %s (%s): injected by %q, want %q", ns, w.label, got, w.rev)
		}
	}
	// A pod injected long ago, its proxy three minor versions behind b's istiod, in a
	// namespace no injector selects now (istiod would inject it again).
	plain := c.Namespace(t)
	if _, err := c.Kube.CoreV1().Pods(plain).Create(context.Background(), fixture.InjectedPod(plain, "old-proxy", "b", "1.27.2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := map[string]string{} // pod -> namespace
	for ns := range want {
		harness.Eventually(t, 30*time.Second, "pods of "+ns, func() (bool, string) {
			l, err := c.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil || len(l.Items) == 0 {
				return false, fmt.Sprint(err)
			}
			for _, p := range l.Items {
				pods[p.Name] = ns
			}
			return true, ""
		})
	}

	revs := revRevisions(t, c)
	for name, v := range map[string]string{"a": "1.29.4", "b": "1.30.0"} {
		r := revs[name]
		if r == nil {
			t.Fatalf("revision %s not listed: %v", name, revs)
		}
		if r.Version != v || r.Namespace != "istio-system" {
			t.Errorf("revision %s: version %q in %q, want %s in istio-system", name, r.Version, r.Namespace, v)
		}
		pilot := false
		for _, comp := range r.Components {
			pilot = pilot || (comp.Name == "Pilot" && comp.Version == v && comp.Object == "Deployment/istio-system/istiod-"+name)
		}
		if !pilot {
			t.Errorf("revision %s: components %+v, want Pilot istiod-%s at %s", name, r.Components, name, v)
		}
	}
	if got := strings.Join(revs["a"].Tags, ","); got != "default" {
		t.Errorf("revision a: tags %s, want default", got)
	}
	if got := strings.Join(revs["b"].Tags, ","); got != "prod" {
		t.Errorf("revision b: tags %s, want prod", got)
	}
	for ns, w := range want {
		found := false
		for name, r := range revs {
			for _, s := range r.Namespaces {
				if s.Namespace != ns {
					continue
				}
				if name != w.rev || s.Label != w.label || s.Tag != w.tag {
					t.Errorf("namespace %s under revision %s (%s, tag %q); want %s (%s, tag %q)", ns, name, s.Label, s.Tag, w.rev, w.label, w.tag)
				}
				found = true
			}
		}
		if !found {
			t.Errorf("namespace %s (%s) not listed", ns, w.label)
		}
	}
	seen := map[string]bool{}
	for name, r := range revs {
		for _, wl := range r.Workloads {
			if wl.Namespace == plain {
				p := wl.Pods[0]
				seen[p.Pod] = true
				if name != "b" || p.Version != "1.27.2" || p.Skew == nil || p.Skew.Rule.ID != "proxy-skew" || wl.Kind != "Pod" ||
					!strings.Contains(p.Skew.Message, "proxies 1.27.2 are 3 minor versions behind istiod 1.30.0") {
					t.Errorf("old-proxy: %+v in %s %s under %s; want revision b, version 1.27.2 out of skew (proxy-skew)", p, wl.Kind, wl.Name, name)
				}
				continue
			}
			w, ok := want[wl.Namespace]
			if !ok {
				continue
			}
			for _, p := range wl.Pods {
				seen[p.Pod] = true
				if name != w.rev {
					t.Errorf("pod %s/%s under revision %s, want %s", wl.Namespace, p.Pod, name, w.rev)
				}
				switch {
				case p.Version != w.version || p.Skew != nil || wl.Kind != "Deployment" || wl.Name != "app":
					t.Errorf("pod %s/%s: %+v in %s/%s; want proxy %s of Deployment app, in skew", wl.Namespace, p.Pod, p, wl.Kind, wl.Name, w.version)
				}
			}
		}
	}
	if !seen["old-proxy"] {
		t.Errorf("pod %s/old-proxy not listed", plain)
	}
	for pod, ns := range pods {
		if !seen[pod] {
			t.Errorf("pod %s/%s not listed", ns, pod)
		}
	}
}

// revInjectedBy creates Deployment ns/app and returns the revision that injected its pod
// ("" for none).
func revInjectedBy(t *testing.T, c *cluster.Cluster, ns string) string {
	t.Helper()
	revApp(t, c, ns, "app")
	var rev string
	harness.Eventually(t, 30*time.Second, "the pod of "+ns+"/app exists", func() (bool, string) {
		l, err := c.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=app"})
		if err != nil || len(l.Items) == 0 {
			return false, fmt.Sprint(err)
		}
		rev = revPodOf(&l.Items[0]).rev
		return true, ""
	})
	return rev
}
