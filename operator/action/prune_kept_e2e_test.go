package action_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// TestPruneKeepsWhatChangedE2E: an install that turns CNI off plans to prune CNI's objects;
// after the plan, once its components start, one stale ConfigMap gets the opt-out label and
// the stale ServiceAccount is deleted and re-created by hand (as kubectl get | kubectl create
// would). The install succeeds; both survive its prune (the copy with its new UID) and each
// is named by a kept event with its reason; the rest of CNI's objects are pruned.
func TestPruneKeepsWhatChangedE2E(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	ctx := context.Background()
	t.Cleanup(func() { purge(t, c) })

	const name = "prune-kept-e2e"
	withCNI := func(cni bool) string { return cniSpec(t, name, ns, cni) }
	extMustInstall(t, c, action.Install{}, spec.Options{Files: []string{withCNI(true)}})

	selector := ownership.LabelComponent + "=Cni," + ownership.LabelOwner + "=" + name
	cms, err := c.Kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil || len(cms.Items) == 0 {
		t.Fatalf("CNI's ConfigMaps: %v (%v)", cms, err)
	}
	sas, err := c.Kube.CoreV1().ServiceAccounts(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil || len(sas.Items) == 0 {
		t.Fatalf("CNI's ServiceAccounts: %v (%v)", sas, err)
	}
	optedOut, recreated := cms.Items[0].Name, sas.Items[0].Name
	optedOutRef, recreatedRef := ref.New("ConfigMap", ns, optedOut).String(), ref.New("ServiceAccount", ns, recreated).String()

	// Between the plan and the prune: the plan has read the stale set by the time a
	// component starts, and the prune comes after every component is ready.
	var once sync.Once
	var newUID types.UID
	change := func() {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{ownership.LabelNotPruned: "true"}}})
		if _, err := c.Kube.CoreV1().ConfigMaps(ns).Patch(ctx, optedOut, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-label"}); err != nil {
			t.Errorf("labelling %s: %v", optedOutRef, err)
			return
		}
		sa, err := c.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, recreated, metav1.GetOptions{})
		if err != nil {
			t.Errorf("reading %s: %v", recreatedRef, err)
			return
		}
		if err := c.Kube.CoreV1().ServiceAccounts(ns).Delete(ctx, recreated, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting %s: %v", recreatedRef, err)
			return
		}
		copied := sa.DeepCopy()
		copied.ObjectMeta = metav1.ObjectMeta{Name: sa.Name, Namespace: sa.Namespace, Labels: sa.Labels, Annotations: sa.Annotations}
		deadline := time.Now().Add(30 * time.Second)
		for {
			made, err := c.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, copied, metav1.CreateOptions{FieldManager: "kubectl-create"})
			if err == nil {
				newUID = made.UID
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("re-creating %s: %v", recreatedRef, err)
				return
			}
			time.Sleep(100 * time.Millisecond) // still terminating
		}
	}
	rec := &event.Recorder{}
	in := action.Install{Config: extConfig(c), Spec: spec.Options{Files: []string{withCNI(false)}}, ReadinessTimeout: 5 * time.Minute, HistoryMax: action.DefaultHistoryMax,
		Events: event.SinkFunc(func(e event.Event) {
			if e.Type == event.ComponentStarted {
				once.Do(change)
			}
			rec.Emit(e)
		})}
	in.Spec.Version = version.Version
	if _, err := in.Run(ctx, nil); err != nil {
		t.Fatalf("install without CNI: %v\n%s", err, messages(rec, event.Warning))
	}
	if t.Failed() {
		return
	}

	kept := map[string]event.KeptReason{}
	for _, e := range rec.Of(event.Kept) {
		kept[e.Object] = e.KeptReason
	}
	if kept[optedOutRef] != event.KeptOptOut || kept[recreatedRef] != event.KeptRecreated || len(kept) != 2 {
		t.Errorf("kept events %v, want %s opt-out and %s recreated", kept, optedOutRef, recreatedRef)
	}
	for _, e := range rec.Of(event.Pruned) {
		if e.Object == optedOutRef || e.Object == recreatedRef {
			t.Errorf("%s has a pruned event", e.Object)
		}
	}
	if len(rec.Of(event.Pruned)) == 0 {
		t.Error("nothing else of CNI was pruned")
	}
	if _, err := c.Kube.CoreV1().ConfigMaps(ns).Get(ctx, optedOut, metav1.GetOptions{}); err != nil {
		t.Errorf("%s: %v", optedOutRef, err)
	}
	if sa, err := c.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, recreated, metav1.GetOptions{}); err != nil || sa.UID != newUID {
		t.Errorf("%s: %v (UID %v, the copy's %s)", recreatedRef, err, sa, newUID)
	}
	left, err := c.Kube.AppsV1().DaemonSets(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil || len(left.Items) != 0 {
		t.Errorf("CNI's DaemonSet is still there: %v (%v)", left, err)
	}
}
