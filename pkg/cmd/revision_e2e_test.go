package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/revision"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestRevisionListE2E: revisions a (built as 1.29.4) and b (1.30.0), the default tag on a
// and tag prod on b, pods injected by the real istiod in four namespaces (the default tag,
// a named tag, istio.io/rev naming the revision, istio-injection=enabled): revision list
// names every namespace and pod under the revision that injects it, in text and JSON, and
// marks a proxy out of skew.
func TestRevisionListE2E(t *testing.T) {
	c := cluster.Get(t)
	c.RequireRealIstiod(t)
	t.Setenv("HOME", t.TempDir())
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	istioctl("uninstall", "--purge", "-y")
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()

	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.At("1.29.4").MustOutput("install", "-y", "--set", "profile=minimal", "--revision", "a")
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.At("1.30.0").MustOutput("install", "-y", "--set", "profile=minimal", "--revision", "b")
	istioctl("tag", "set", "default", "--revision", "a", "--overwrite")
	istioctl("tag", "set", "prod", "--revision", "b")

	type where struct{ rev, label, tag, version string }
	byTag := labelled(t, c, map[string]string{"istio.io/rev": "default"})
	named := labelled(t, c, map[string]string{"istio.io/rev": "prod"})
	direct := labelled(t, c, map[string]string{"istio.io/rev": "b"})
	enabled := labelled(t, c, map[string]string{"istio-injection": "enabled"})
	want := map[string]where{
		byTag:   {"a", "istio.io/rev=default", "default", "1.29.4"},
		named:   {"b", "istio.io/rev=prod", "prod", "1.30.0"},
		direct:  {"b", "istio.io/rev=b", "", "1.30.0"},
		enabled: {"a", "istio-injection=enabled", "default", "1.29.4"},
	}
	for ns, w := range want {
		if got := injectedBy(t, c, ns, "app"); got != w.rev {
			t.Fatalf("namespace %s (%s): injected by %q, want %q", ns, w.label, got, w.rev)
		}
	}
	// A pod injected long ago, its proxy three minor versions behind b's istiod, in a
	// namespace no injector selects now (istiod would inject it again).
	plain := c.Namespace(t)
	injectedLongAgo(t, c, plain, "b", "1.27.2")
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

	var list struct{ Revisions []revision.Revision }
	if err := json.Unmarshal([]byte(istioctl("x", "revision", "list", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	revs := map[string]revision.Revision{}
	for _, r := range list.Revisions {
		revs[r.Name] = r
	}
	for name, v := range map[string]string{"a": "1.29.4", "b": "1.30.0"} {
		r := revs[name]
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
				if name != "b" || p.Version != "1.27.2" || p.Skew == nil || p.Skew.Rule.ID != "proxy-skew" || wl.Kind != "Pod" {
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

	// The text names the same, each under its revision's heading.
	text := istioctl("x", "revision", "list")
	blocks := map[string]string{}
	for _, b := range strings.Split(text, "\nREVISION ") {
		name, _, _ := strings.Cut(strings.TrimPrefix(b, "REVISION "), ":")
		blocks[name] = b
	}
	for ns, w := range want {
		b := blocks[w.rev]
		label := w.label
		if w.tag != "" {
			label += ", tag " + w.tag
		}
		if !strings.Contains(b, "    "+ns+" ("+label+")") {
			t.Errorf("text: namespace %s (%s) not under revision %s:\n%s", ns, label, w.rev, text)
		}
	}
	for pod, ns := range pods {
		w := want[ns]
		re := regexp.MustCompile(`(?m)^      ` + regexp.QuoteMeta(pod) + ` proxy `)
		if !re.MatchString(blocks[w.rev]) {
			t.Errorf("text: pod %s/%s not under revision %s:\n%s", ns, pod, w.rev, text)
		}
	}
	if !strings.Contains(blocks["b"], "old-proxy proxy 1.27.2 OUT OF SKEW: proxies 1.27.2 are 3 minor versions behind istiod 1.30.0") ||
		!strings.Contains(blocks["b"], "rule proxy-skew") {
		t.Errorf("text: old-proxy not marked out of skew with its rule:\n%s", text)
	}
}

// injectedLongAgo creates pod old-proxy in ns as a past injection by revision rev left it:
// the status annotation and a proxy container at version, which no injector wrote now.
func injectedLongAgo(t *testing.T, c *cluster.Cluster, ns, rev, version string) {
	t.Helper()
	old := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "old-proxy", Namespace: ns,
			Annotations: map[string]string{"sidecar.istio.io/status": `{"containers":["istio-proxy"],"revision":"` + rev + `"}`}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"},
			{Name: "istio-proxy", Image: "docker.io/istio/proxyv2:" + version}}},
	}
	if _, err := c.Kube.CoreV1().Pods(ns).Create(context.Background(), old, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
