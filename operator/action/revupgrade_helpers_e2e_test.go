package action_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/migrate"
	"github.com/istioctl-installer/istioctl/operator/revision"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// revConfig is what an istioctl built as version gives the actions (make build
// VERSION=...): the version stamps what it installs.
func revConfig(c *cluster.Cluster, version string) *action.Config {
	cfg := config(c)
	cfg.Version = version
	return cfg
}

// revInstall runs in as an istioctl built as version runs install --set sets -r rev (its
// Config, events, the spec's sets, revision and version, and the wait when unset, filled
// in), and returns its events.
func revInstall(c *cluster.Cluster, version, rev string, in action.Install, sets ...string) (*event.Recorder, error) {
	rec := &event.Recorder{}
	in.Config, in.Events = revConfig(c, version), rec
	in.Spec.Sets, in.Spec.Revision, in.Spec.Version = sets, rev, version
	if in.ReadinessTimeout == 0 {
		in.ReadinessTimeout = 2 * time.Minute
	}
	in.HistoryMax = action.DefaultHistoryMax
	_, err := in.Run(context.Background(), nil)
	return rec, err
}

// revMustInstall is revInstall that must succeed.
func revMustInstall(t *testing.T, c *cluster.Cluster, version, rev string, sets ...string) {
	t.Helper()
	if rec, err := revInstall(c, version, rev, action.Install{}, sets...); err != nil {
		t.Fatalf("install %s %v at %s: %v\n%s", rev, sets, version, err, messages(rec, event.Warning))
	}
}

// revTag points tag at rev (tag set --overwrite).
func revTag(t *testing.T, c *cluster.Cluster, tag, rev string) {
	t.Helper()
	if _, err := (&action.TagSet{Config: config(c), Tag: tag, Revision: rev, Overwrite: true}).Run(context.Background(), nil); err != nil {
		t.Fatalf("tag set %s --revision %s: %v", tag, rev, err)
	}
}

// revApp creates Deployment ns/name of one pod, labelled app=name.
func revApp(t *testing.T, c *cluster.Cluster, ns, name string) {
	t.Helper()
	labels := map[string]string{"app": name}
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
			},
		},
	}
	if _, err := c.Kube.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// revRevisions lists the revisions (x revision list), by name.
func revRevisions(t *testing.T, c *cluster.Cluster) map[string]*revision.Revision {
	t.Helper()
	list, err := (&action.RevisionList{Config: config(c)}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*revision.Revision{}
	for _, r := range list {
		out[r.Name] = r
	}
	return out
}

// revPod is a pod's uid, injecting revision and proxy image tag.
type revPod struct{ uid, rev, proxy string }

// revPodOf reads the injector's status and the proxy's image tag of a pod.
func revPodOf(p *corev1.Pod) revPod {
	var st struct{ Revision string }
	_ = json.Unmarshal([]byte(p.Annotations["sidecar.istio.io/status"]), &st)
	s := revPod{uid: string(p.UID), rev: st.Revision}
	for _, ctr := range p.Spec.Containers {
		if ctr.Name == "istio-proxy" {
			s.proxy = ctr.Image[strings.LastIndex(ctr.Image, ":")+1:]
		}
	}
	return s
}

// revPodsOf lists the live pods of a workload (Deployment/ns/name).
func revPodsOf(t *testing.T, c *cluster.Cluster, w string) []revPod {
	t.Helper()
	parts := strings.Split(w, "/")
	l, err := c.Kube.CoreV1().Pods(parts[1]).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + parts[2]})
	if err != nil {
		t.Fatal(err)
	}
	var out []revPod
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, revPodOf(&p))
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no pods", w)
	}
	return out
}

// revUIDs are the uids of the first pod of each workload.
func revUIDs(t *testing.T, c *cluster.Cluster, ws []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, w := range ws {
		out[w] = revPodsOf(t, c, w)[0].uid
	}
	return out
}

// revAllOn waits until every pod of nss is one pod per Deployment (5 a namespace), injected
// by rev with rev's proxy (1.29.4 for a, anything newer for b).
func revAllOn(t *testing.T, c *cluster.Cluster, nss []string, rev string) {
	t.Helper()
	harness.Eventually(t, 60*time.Second, "every pod on revision "+rev, func() (bool, string) {
		for _, ns := range nss {
			l, err := c.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			n := 0
			for _, p := range l.Items {
				if p.DeletionTimestamp != nil {
					continue
				}
				n++
				if st := revPodOf(&p); st.rev != rev || (rev == "a") != (st.proxy == "1.29.4") {
					return false, fmt.Sprintf("pod %s/%s: revision %q, proxy %q", ns, p.Name, st.rev, st.proxy)
				}
			}
			if n != 5 {
				return false, fmt.Sprintf("%s: %d pods", ns, n)
			}
		}
		return true, ""
	})
}

// revSetNodeSelector sets the node selector of Deployment ns/name's pods.
func revSetNodeSelector(t *testing.T, c *cluster.Cluster, ns, name string, sel map[string]string) {
	t.Helper()
	ctx := context.Background()
	d, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.NodeSelector = sel
	if _, err := c.Kube.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// revRestartsInFlight reads the audit log from since and returns the most workloads
// restarting at once: a workload restarts from our restart write (a patch as the revision
// upgrade's field manager) until a pod of its is deleted (the controller removing the old
// pod, which the gate waits for through the Deployment's readiness).
func revRestartsInFlight(t *testing.T, c *cluster.Cluster, since time.Time) int {
	t.Helper()
	inFlight := map[string]bool{} // ns/workload
	most := 0
	revAudit(t, c, since, func(e revAuditEntry) {
		switch {
		case e.Verb == "patch" && e.ObjectRef.Resource == "deployments" && strings.Contains(e.RequestURI, "fieldManager="+migrate.FieldManager):
			inFlight[e.ObjectRef.Namespace+"/"+e.ObjectRef.Name] = true
			most = max(most, len(inFlight))
		case e.Verb == "delete" && e.ObjectRef.Resource == "pods":
			// Pods are named <deployment>-<template hash>-<suffix>.
			parts := strings.Split(e.ObjectRef.Name, "-")
			if len(parts) >= 3 {
				delete(inFlight, e.ObjectRef.Namespace+"/"+strings.Join(parts[:len(parts)-2], "-"))
			}
		}
	})
	return most
}

// revAuditEntry is an entry of the apiserver's audit log: the fields these tests read.
type revAuditEntry struct {
	Verb           string    `json:"verb"`
	RequestURI     string    `json:"requestURI"`
	StageTimestamp time.Time `json:"stageTimestamp"`
	ObjectRef      struct {
		Resource, Namespace, Name, Subresource string
	} `json:"objectRef"`
}

// revAudit calls fn with each entry of the audit log from since, in order; requests to
// subresources are left out.
func revAudit(t *testing.T, c *cluster.Cluster, since time.Time, fn func(revAuditEntry)) {
	t.Helper()
	f, err := os.Open(c.AuditLog())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e revAuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit log line %q: %v", sc.Text(), err)
		}
		if !e.StageTimestamp.Before(since) && e.ObjectRef.Subresource == "" {
			fn(e)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
