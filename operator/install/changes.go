package install

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
)

// Action is what a run did to an object (in a plan or a dry run: would do): the applied and
// pruned events' action (event.Action), or Skipped.
type Action = event.Action

// The actions.
const (
	Created     = event.ActionCreated
	Configured  = event.ActionConfigured
	Unchanged   = event.ActionUnchanged
	Deactivated = event.ActionDeactivated
	Pruned      = event.ActionPruned
	Removed     = event.ActionRemoved
	// Skipped: not applied (the run stopped, or a parent component failed); never an
	// event's.
	Skipped Action = "skipped"
)

// Change is what happened, or would happen, to one object.
type Change struct {
	// Object is Kind/namespace/name.
	Object    string
	Component string
	Action    Action
	// DryRun says nothing was written: the change would happen.
	DryRun bool
	// Diff is, for an object a dry run would configure, the unified diff of what the
	// server says it would become (Secret values masked).
	Diff []string
	// TakenOver lists the fields taken over from another field manager ("manager: .path").
	TakenOver []string
	// Fields are, for an object a run would configure, the paths of the fields that change
	// (Installer.UpdatedFields; never values).
	Fields []string
	// Note says more ("its namespace does not exist yet, so the server could not check it").
	Note string
}

// Status is the change as the events' status field has always worded it: created,
// configured, unchanged, deactivated; "would be created" and the like in a dry run (with the
// note in brackets); pruned and removed objects have none unless in a dry run.
func (c Change) Status() string {
	s := string(c.Action)
	switch c.Action {
	case Pruned, Removed:
		s = ""
		if c.DryRun {
			s = "would be " + string(c.Action)
		}
	case Created, Configured, Deactivated:
		if c.DryRun {
			s = "would be " + s
		}
	}
	if c.Note != "" {
		s += " (" + c.Note + ")"
	}
	return s
}

// plan is the change as a summary lists it.
func (c Change) plan() event.ObjectPlan {
	return event.ObjectPlan{Object: c.Object, Action: c.Action, Fields: c.Fields}
}

// Event is the change's event, on top of base (the component's fields): applied, or pruned
// for a pruned or removed object.
func (c Change) Event(base event.Event) event.Event {
	e := base
	e.Type, e.Object, e.Status, e.Action, e.Details = event.Applied, c.Object, c.Status(), c.Action, c.Diff
	if c.Action == Pruned || c.Action == Removed {
		e.Type, e.Component = event.Pruned, c.Component
	}
	return e
}

// Count is how many of changes are of one of the actions.
func Count(changes []Change, actions ...Action) int {
	n := 0
	for _, c := range changes {
		for _, a := range actions {
			if c.Action == a {
				n++
			}
		}
	}
	return n
}

// Changes foresees, from what the metadata lists say exists (the same lists the apply
// reuses, so no request the install would not make), what applying manifests and pruning
// stale would do to each object: Created, Configured (the server decides whether anything
// changes), Unchanged (no write) or Pruned. The namespaces a run creates for its components
// are not among them.
func (in *Run) Changes(ctx context.Context, manifests []render.Manifest, stale []*unstructured.Unstructured) ([]Change, error) {
	var out []Change
	for _, m := range manifests {
		labels := in.Owner.Labels(m.Instance.Name)
		for _, o := range m.Objects {
			c, err := in.foresee(ctx, o, labels, m.Instance.Key())
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	for _, o := range stale {
		out = append(out, Change{Object: ref.Of(o).String(), Component: o.GetLabels()[ownership.LabelComponent], Action: Pruned, DryRun: true})
	}
	return out, nil
}

// ChangesOf foresees, as Changes does, what applying objs as they are (an install's extra
// objects, such as the default revision tag's) would do, grouped under component.
func (in *Run) ChangesOf(ctx context.Context, objs []*unstructured.Unstructured, component string) ([]Change, error) {
	var out []Change
	for _, o := range objs {
		c, err := in.foresee(ctx, o, nil, component)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// foresee says what applying o, with labels added, would do, from the metadata lists.
func (in *Run) foresee(ctx context.Context, o *unstructured.Unstructured, labels map[string]string, component string) (Change, error) {
	c := Change{Object: ref.Of(o).String(), Component: component, Action: Created, DryRun: true}
	before, err := in.before(ctx, o)
	switch {
	case apierrors.IsForbidden(err):
		// Not allowed to list the kind: the apply reads the object itself.
		c.Action = Configured
	case err != nil:
		return c, fmt.Errorf("reading what exists before installing: %w", err)
	case before != nil:
		c.Action = Configured
		if labels != nil {
			o = withLabels(o, labels)
		}
		if same, err := in.Client.Unchanged(o, before); err != nil {
			return c, err
		} else if same {
			c.Action = Unchanged
		}
	}
	return c, nil
}

// withLabels is a copy of o carrying labels as well: what the install applies.
func withLabels(o *unstructured.Unstructured, labels map[string]string) *unstructured.Unstructured {
	o = o.DeepCopy()
	l := o.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	for k, v := range labels {
		l[k] = v
	}
	o.SetLabels(l)
	return o
}

// Writing is manifests cut to the objects changes say a run sends (created or
// configured): what the cluster must admit. Components keep their place.
func Writing(manifests []render.Manifest, changes []Change) []render.Manifest {
	sent := map[string]bool{}
	for _, c := range changes {
		if c.Action == Created || c.Action == Configured {
			sent[c.Component+" "+c.Object] = true
		}
	}
	out := make([]render.Manifest, len(manifests))
	for i, m := range manifests {
		out[i] = render.Manifest{Instance: m.Instance}
		for _, o := range m.Objects {
			if sent[m.Instance.Key()+" "+ref.Of(o).String()] {
				out[i].Objects = append(out[i].Objects, o)
			}
		}
	}
	return out
}
