package install

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/fakekube"
)

// ours is a ConfigMap of owner's Pilot that istioctl applied, as a read found it.
func ours(owner ownership.Owner, name, uid, rv string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	o.SetNamespace("istio-system")
	o.SetName(name)
	o.SetUID(types.UID(uid))
	o.SetResourceVersion(rv)
	o.SetLabels(owner.Labels(component.Pilot))
	o.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: ownership.FieldManager, Operation: metav1.ManagedFieldsOperationApply}})
	return o
}

// recordingSink keeps the events emitted.
type recordingSink struct{ events []event.Event }

func (r *recordingSink) Emit(e event.Event) { r.events = append(r.events, e) }

// TestDeletesCarryThePlan: every delete a prune and an uninstall send carries the UID and
// resourceVersion of the read that decided it. One that changed since is read again and
// judged again by the same rule: still ours and stale, it goes with the new preconditions;
// opted out, re-created by someone else (another UID) or no longer ours, it is left and
// named by a kept event.
func TestDeletesCarryThePlan(t *testing.T) {
	owner := ownership.Owner{Namespace: "istio-system", Version: "1.30.0"}
	type live struct {
		name, uid, rv string
		edit          func(*unstructured.Unstructured)
	}
	optOut := func(o *unstructured.Unstructured) {
		l := o.GetLabels()
		l[ownership.LabelNotPruned] = "true"
		o.SetLabels(l)
	}
	notOurs := func(o *unstructured.Unstructured) {
		o.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate}})
	}
	for _, tc := range []struct {
		name      string
		uninstall bool
		dryRun    bool
		// now is what the cluster holds of the planned object a (uid a, rv 1).
		now live
		// deletes are the preconditions sent, "uid/rv" each; kept the reason, if left.
		deletes string
		kept    event.KeptReason
		gone    bool
	}{
		{name: "prune unchanged", now: live{"a", "a", "1", nil}, deletes: "a/1", gone: true},
		{name: "prune dry run", dryRun: true, now: live{"a", "a", "1", nil}, deletes: "a/1"},
		{name: "prune changed, still stale", now: live{"a", "a", "2", nil}, deletes: "a/1 a/2", gone: true},
		{name: "prune opted out", now: live{"a", "a", "2", optOut}, deletes: "a/1", kept: event.KeptOptOut},
		{name: "prune re-created", now: live{"a", "b", "7", nil}, deletes: "a/1", kept: event.KeptRecreated},
		{name: "prune no longer ours", now: live{"a", "a", "2", notOurs}, deletes: "a/1", kept: event.KeptNotOurs},
		{name: "uninstall unchanged", uninstall: true, now: live{"a", "a", "1", nil}, deletes: "a/1", gone: true},
		{name: "uninstall dry run", uninstall: true, dryRun: true, now: live{"a", "a", "1", nil}, deletes: "a/1"},
		{name: "uninstall changed, still ours", uninstall: true, now: live{"a", "a", "3", nil}, deletes: "a/1 a/3", gone: true},
		{name: "uninstall re-created", uninstall: true, now: live{"a", "c", "1", nil}, deletes: "a/1", kept: event.KeptRecreated},
		{name: "uninstall no longer ours", uninstall: true, now: live{"a", "a", "2", notOurs}, deletes: "a/1", kept: event.KeptNotOurs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := ours(owner, tc.now.name, tc.now.uid, tc.now.rv)
			if tc.now.edit != nil {
				tc.now.edit(now)
			}
			fc, err := fakekube.New([]*unstructured.Unstructured{now})
			if err != nil {
				t.Fatal(err)
			}
			planned := ours(owner, "a", "a", "1")
			in := &Installer{Client: fc.Client, Owner: owner, Opts: Options{DryRun: tc.dryRun}}
			sink := &recordingSink{}
			switch {
			case tc.uninstall && tc.dryRun:
				_, err = in.Start().Uninstall(context.Background(), sink, []*unstructured.Unstructured{planned}, UninstallOptions{DryRun: true})
			case tc.uninstall:
				// Uninstall's batches, without its waits (watches the fake does not serve).
				var rule still
				if rule, err = removable(owner.UninstallSelector(false)); err == nil {
					_, _, _, err = in.Start().newPass(sink).removeBatch(context.Background(), []*unstructured.Unstructured{planned}, false, Removed, rule, nil)
				}
			case tc.dryRun:
				_, err = in.Start().newPass(sink).prune(context.Background(), nil, []*unstructured.Unstructured{planned})
			default:
				// A prune's batch (prune also waits for what went to be gone, through watches)
				// with the rule of a render that no longer holds a.
				_, _, _, err = in.Start().newPass(sink).removeBatch(context.Background(), []*unstructured.Unstructured{planned}, false, Pruned, staleStill(owner, nil), nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			var sent []string
			for _, d := range fc.Deletes() {
				p := d.Options.Preconditions
				if p == nil || p.UID == nil || p.ResourceVersion == nil {
					t.Fatalf("delete of %s without preconditions: %+v", d.Name, d.Options)
				}
				if got := len(d.Options.DryRun) > 0; got != tc.dryRun {
					t.Errorf("dry run %v, want %v", got, tc.dryRun)
				}
				sent = append(sent, fmt.Sprintf("%s/%s", *p.UID, *p.ResourceVersion))
			}
			if got := strings.Join(sent, " "); got != tc.deletes {
				t.Errorf("deletes sent with %q, want %q", got, tc.deletes)
			}
			var kept event.KeptReason
			pruned := 0
			for _, e := range sink.events {
				switch e.Type {
				case event.Kept:
					kept = e.KeptReason
					if e.Object != "ConfigMap/istio-system/a" || e.Component != string(component.Pilot) {
						t.Errorf("kept event names %q of %q", e.Object, e.Component)
					}
				case event.Pruned:
					pruned++
				}
			}
			if kept != tc.kept {
				t.Errorf("kept %q, want %q", kept, tc.kept)
			}
			if wantPruned := map[bool]int{true: 0, false: 1}[tc.kept != ""]; pruned != wantPruned {
				t.Errorf("%d pruned events, want %d", pruned, wantPruned)
			}
			gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
			if exists := fc.Exists(gvr, "istio-system", "a"); exists == tc.gone {
				t.Errorf("exists after the delete: %v, want %v", exists, !tc.gone)
			}
		})
	}
}
