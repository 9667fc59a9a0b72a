package migrate

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/event"
)

func skippedEvents(rec *event.Recorder) []string {
	var out []string
	for _, e := range rec.Of(event.Skipped) {
		out = append(out, e.Object+" "+string(e.SkipReason))
	}
	return out
}

// A relabel is written only to a namespace that exists and carries the recorded value, as
// read (UID and resourceVersion sent with it): a namespace deleted or relabelled since,
// before the read or between the read and the write, is skipped and never re-created.
func TestRelabelAsRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		ns   map[string]string // the namespace's labels (nil: there is none)
		// meanwhile changes the cluster between the read and the write.
		meanwhile   func(f *fakeCluster)
		wantLabel   string // the label after ("": the namespace does not exist)
		wantSkipped string
		wantApplies int
	}{
		{name: "carries the recorded value", ns: map[string]string{"istio.io/rev": "a"}, wantLabel: "b", wantApplies: 1},
		{name: "deleted since", wantSkipped: "Namespace/direct deleted"},
		{name: "relabelled since", ns: map[string]string{"istio.io/rev": "canary"}, wantLabel: "canary",
			wantSkipped: "Namespace/direct label-changed"},
		{name: "relabelled between the read and the write", ns: map[string]string{"istio.io/rev": "a"},
			meanwhile: func(f *fakeCluster) {
				n := f.get(namespacesGVR, "", "direct").DeepCopy()
				n.SetLabels(map[string]string{"istio.io/rev": "canary"})
				n.SetResourceVersion("2")
				_ = f.tracker.Update(namespacesGVR, n, "")
			},
			wantLabel: "canary", wantSkipped: "Namespace/direct label-changed", wantApplies: 1},
		{name: "deleted between the read and the write", ns: map[string]string{"istio.io/rev": "a"},
			meanwhile:   func(f *fakeCluster) { _ = f.tracker.Delete(namespacesGVR, "", "direct") },
			wantSkipped: "Namespace/direct deleted", wantApplies: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f *fakeCluster
			if tc.ns != nil {
				f = newFakeCluster(t, namespace("direct", tc.ns))
			} else {
				f = newFakeCluster(t)
			}
			if tc.meanwhile != nil {
				once := false
				f.beforeApply = func(schema.GroupVersionResource, string, string) {
					if !once {
						once = true
						tc.meanwhile(f)
					}
				}
			}
			rec := &event.Recorder{}
			r := &Runner{Client: f.client, Namespace: "istio-system", Events: rec}
			if err := r.relabel(context.Background(), Relabel{Namespace: "direct", From: "a", To: "b"}); err != nil {
				t.Fatal(err)
			}
			n := f.get(namespacesGVR, "", "direct")
			switch {
			case tc.wantLabel == "" && n != nil:
				t.Errorf("the namespace exists after the relabel: %v", n.Object)
			case tc.wantLabel != "" && (n == nil || n.GetLabels()["istio.io/rev"] != tc.wantLabel):
				t.Errorf("the namespace after the relabel: %v, want istio.io/rev=%s", n, tc.wantLabel)
			}
			applies := f.appliesTo("namespaces", "", "direct")
			if len(applies) != tc.wantApplies {
				t.Fatalf("%d applies, want %d", len(applies), tc.wantApplies)
			}
			for _, a := range applies {
				if a.Body.GetUID() != "uid-direct" || a.Body.GetResourceVersion() == "" {
					t.Errorf("an apply without the read's UID and resourceVersion: %v", a.Body.Object)
				}
			}
			got := strings.Join(skippedEvents(rec), ", ")
			if got != tc.wantSkipped {
				t.Errorf("skipped %q, want %q", got, tc.wantSkipped)
			}
			if relabelled := len(rec.Of(event.Applied)) == 1; relabelled != (tc.wantLabel == "b") {
				t.Errorf("applied events %+v", rec.Of(event.Applied))
			}
		})
	}
}

// A restart goes only to the workload read: one deleted since fails and is not created.
func TestRestartNeverCreates(t *testing.T) {
	f := newFakeCluster(t, deployment("app", "w0"))
	r := &Runner{Client: f.client, Events: &event.Recorder{}, Now: func() time.Time { return time.Unix(0, 0) }}
	ctx := context.Background()
	if _, err := r.restart(ctx, wl("app/w0"), "uid-w0"); err != nil {
		t.Fatalf("restarting a workload that exists: %v", err)
	}
	ann, _, _ := unstructured.NestedString(f.get(deploymentsGVR, "app", "w0").Object, "spec", "template", "metadata", "annotations", RestartAnnotation)
	if ann == "" {
		t.Errorf("the restart annotation was not set")
	}
	_, err := r.restart(ctx, wl("app/gone"), "uid-gone")
	if err == nil || !strings.Contains(err.Error(), "deleted since") {
		t.Errorf("restarting a deleted workload: %v", err)
	}
	if f.get(deploymentsGVR, "app", "gone") != nil {
		t.Errorf("restarting a deleted workload created it")
	}
	// One re-created since (another UID) is refused too.
	if _, err := r.restart(ctx, wl("app/w0"), "uid-old"); err == nil {
		t.Errorf("restarting a re-created workload went ahead")
	}
}

// A batch skips a workload deleted since the plan, with a skipped event, and restarts the
// rest (a dry run: read, not watched).
func TestBatchSkipsDeleted(t *testing.T) {
	// istio-system holds the record's seal (history.Seal).
	f := newFakeCluster(t, namespace("istio-system", nil), deployment("app", "w0"), deployment("app", "w2"))
	rec := &event.Recorder{}
	r := &Runner{Client: f.client, Namespace: "istio-system", Events: rec, DryRun: true}
	p := &Plan{From: "a", To: "b", Batches: [][]Workload{wls("app/w0", "app/w1", "app/w2")}}
	res, err := r.Run(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(skippedEvents(rec), ", "); got != "Deployment/app/w1 deleted" {
		t.Errorf("skipped %q", got)
	}
	if res.Restarted != 2 || len(f.appliesTo("deployments", "app", "w1")) != 0 || f.get(deploymentsGVR, "app", "w1") != nil {
		t.Errorf("restarted %d; applies to the deleted one %v", res.Restarted, f.appliesTo("deployments", "app", "w1"))
	}
}
