package install

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/existing"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/render"
)

// Snapshot is what existed of a run's rendered objects just before its first write, whoever
// managed them (Helm, kubectl, another tool, istioctl): a full copy of each, to give back
// should the run fail, and their UIDs, which no restore may delete. Namespaces are shared
// and left out, as the ownership gate leaves them out.
type Snapshot struct {
	// objects are the copies, in the manifests' order.
	objects []*unstructured.Unstructured
	existed map[types.UID]bool
}

// Snapshot reads every object manifests render (a request each, concurrently): the ones
// that exist are the snapshot. An object of a kind the cluster does not serve yet does not
// exist; any other failed read fails the snapshot, and the run must then write nothing.
func (in *Run) Snapshot(ctx context.Context, manifests []render.Manifest) (*Snapshot, error) {
	var objs []*unstructured.Unstructured
	for _, m := range manifests {
		for _, o := range m.Objects {
			if o.GetKind() != "Namespace" {
				objs = append(objs, o)
			}
		}
	}
	live := make([]*unstructured.Unstructured, len(objs))
	errs := make([]error, len(objs))
	sem := make(chan struct{}, in.concurrency())
	var wg sync.WaitGroup
	for i, o := range objs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			live[i], errs[i] = in.Client.Get(ctx, o)
			if meta.IsNoMatchError(errs[i]) {
				live[i], errs[i] = nil, nil
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("reading what exists before the first write (to give it back should the run fail): %w", err)
	}
	s := &Snapshot{existed: map[types.UID]bool{}}
	for i, l := range live {
		if l == nil {
			continue
		}
		l.SetGroupVersionKind(objs[i].GroupVersionKind())
		s.existed[l.GetUID()] = true
		if l.GetDeletionTimestamp() == nil { // one being deleted is not given back to life
			s.objects = append(s.objects, l)
		}
	}
	return s, nil
}

// Without is objs without the ones that existed when the snapshot was taken (by UID): what
// a restore may remove. A nil snapshot keeps them all.
func (s *Snapshot) Without(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	if s == nil {
		return objs
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if !s.existed[o.GetUID()] {
			out = append(out, o)
		}
	}
	return out
}

// GiveBack is what a restore gives back of a snapshot: each object the run wrote, as the
// snapshot holds it, and as it is now; and those it cannot give back (gone, or re-created
// by someone else).
type GiveBack struct {
	items []givenBack
}

type givenBack struct {
	snapshot, live *unstructured.Unstructured
	// left is why the object is not written (gone, recreated); "" to give it back.
	left event.RestoreOutcome
}

// Objects are the objects the restore writes back, Kind/namespace/name each.
func (g *GiveBack) Objects() []string {
	var out []string
	for _, it := range g.items {
		if it.left == "" {
			out = append(out, ref.Of(it.snapshot).String())
		}
	}
	return out
}

// PlanGiveBack reads each object of s again and keeps those the run wrote: a different
// resourceVersion and different entries of this client's field manager (an object only a
// controller touched since, its status, is not written back). A nil snapshot gives back
// nothing.
func (in *Run) PlanGiveBack(ctx context.Context, s *Snapshot) (*GiveBack, error) {
	g := &GiveBack{}
	if s == nil {
		return g, nil
	}
	for _, snap := range s.objects {
		live, err := in.Client.Get(ctx, snap)
		if err != nil && !meta.IsNoMatchError(err) {
			return nil, err
		}
		switch {
		case live == nil:
			g.items = append(g.items, givenBack{snapshot: snap, left: event.RestoreGone})
		case live.GetUID() != snap.GetUID():
			g.items = append(g.items, givenBack{snapshot: snap, live: live, left: event.RestoreRecreated})
		case in.wrote(snap, live):
			g.items = append(g.items, givenBack{snapshot: snap, live: live})
		}
	}
	return g, nil
}

// wrote says this client wrote the object between snapshot and live: its field manager's
// entries of the object (not of a subresource) changed.
func (in *Run) wrote(snapshot, live *unstructured.Unstructured) bool {
	if snapshot.GetResourceVersion() == live.GetResourceVersion() {
		return false
	}
	mine := func(o *unstructured.Unstructured) []metav1.ManagedFieldsEntry {
		var out []metav1.ManagedFieldsEntry
		for _, mf := range o.GetManagedFields() {
			if mf.Manager == in.Client.Manager() && mf.Subresource == "" {
				out = append(out, mf)
			}
		}
		return out
	}
	return !equality.Semantic.DeepEqual(mine(snapshot), mine(live))
}

// GiveBack writes back each object of g as its snapshot holds it (kube.Client.GiveBack), and
// emits a restored event for every object of g: given back (naming who manages it again),
// gone, re-created by someone else, or failed. It goes on past a failure and returns them
// all. It never creates or deletes an object.
func (in *Run) GiveBack(ctx context.Context, events event.Sink, g *GiveBack) error {
	if events == nil {
		events = event.Discard{}
	}
	var errs []error
	for _, it := range g.items {
		e := event.Event{Type: event.Restored, Object: ref.Of(it.snapshot).String(), RestoredChange: event.RestoredChange{RestoreOutcome: it.left}}
		if it.left == "" {
			err := in.Client.GiveBack(ctx, it.snapshot, it.live)
			switch {
			case errors.Is(err, kube.ErrGone):
				e.RestoreOutcome = event.RestoreGone
			case errors.Is(err, kube.ErrRecreated):
				e.RestoreOutcome = event.RestoreRecreated
			case err != nil:
				e.RestoreOutcome, e.Error = event.RestoreFailed, err.Error()
				errs = append(errs, err)
			default:
				e.RestoreOutcome, e.Message = event.RestoreGivenBack, existing.ManagerOf(it.snapshot)
			}
		}
		events.Emit(e)
	}
	return errors.Join(errs...)
}
