package install

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/objdiff"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
)

// Summary is what a run will do, per component (event.Summary: the printer reads it).
type Summary = event.Summary

// TagStep is an install's step on the default revision tag.
type TagStep = event.TagStep

// Summarize groups an install's foreseen changes (Installer.Changes) by component: the
// components manifests install, in install order, then the components whose objects are
// only pruned, in registry order. A pruned object carries its component's name (the label),
// not an instance's: it counts under the one instance of that component the run installs,
// or, with none or several (gateways), under the component itself.
func Summarize(manifests []render.Manifest, changes []Change) *Summary {
	s := &Summary{Objects: map[string][]event.ObjectPlan{}}
	index := map[string]int{}
	add := func(key, title string) int {
		if i, ok := index[key]; ok {
			return i
		}
		index[key] = len(s.Components)
		s.Components = append(s.Components, event.ComponentChanges{Component: key, Title: title})
		return index[key]
	}
	instances := map[string][]string{}
	for _, m := range manifests {
		add(m.Instance.Key(), componentEvent(m.Instance).Title)
		instances[string(m.Instance.Name)] = append(instances[string(m.Instance.Name)], m.Instance.Key())
	}
	prunedUnder := func(name string) string {
		if keys := instances[name]; len(keys) == 1 {
			return keys[0]
		}
		return name
	}
	for _, c := range component.All {
		for _, ch := range changes {
			if ch.Action == Pruned && ch.Component == string(c.Name) {
				add(prunedUnder(ch.Component), c.Title)
			}
		}
	}
	for _, ch := range changes {
		key := ch.Component
		if ch.Action == Pruned {
			key = prunedUnder(key)
		}
		counts := &s.Components[add(key, key)].Counts
		switch ch.Action {
		case Created:
			counts.Create++
		case Configured, Deactivated:
			counts.Update++
		case Unchanged:
			counts.Unchanged++
		case Pruned:
			counts.Prune++
		case Removed:
			counts.Remove++
		}
		if ch.Action != Unchanged && ch.Action != Skipped {
			s.Objects[key] = append(s.Objects[key], ch.plan())
		}
	}
	for _, c := range s.Components {
		s.Counts.Add(c.Counts)
	}
	return s
}

// SummarizeRemoval groups an uninstall's targets (in removal order) by what they belong to:
// a component (its label), the revision tags, or the install records.
func SummarizeRemoval(targets []*unstructured.Unstructured, group func(*unstructured.Unstructured) (key, title string)) *Summary {
	s := &Summary{Objects: map[string][]event.ObjectPlan{}}
	index := map[string]int{}
	for _, t := range targets {
		key, title := group(t)
		i, ok := index[key]
		if !ok {
			i = len(s.Components)
			index[key] = i
			s.Components = append(s.Components, event.ComponentChanges{Component: key, Title: title})
		}
		s.Components[i].Remove++
		s.Remove++
		s.Objects[key] = append(s.Objects[key], event.ObjectPlan{Object: ref.Of(t).String(), Action: Removed})
	}
	return s
}

// ComponentTitle is how people call the component an object's label names ("" when it
// names none).
func ComponentTitle(o *unstructured.Unstructured) (key, title string) {
	name := o.GetLabels()[ownership.LabelComponent]
	if c, ok := component.Get(component.Name(name)); ok {
		return name, c.Title
	}
	return name, ""
}

// UpdatedFields fills in, for each change that configures an object of manifests, the
// fields the apply would change, as a server-side dry run of the apply says: one read and
// one dry-run request per such object, concurrently. Only for a person about to confirm
// (or -v): the counts need no request. Secret values are never compared into the output:
// the fields are paths.
func (in *Run) UpdatedFields(ctx context.Context, manifests []render.Manifest, changes []Change) error {
	objs := map[string]*unstructured.Unstructured{}
	for _, m := range manifests {
		labels := in.Owner.Labels(m.Instance.Name)
		for _, o := range m.Objects {
			objs[ref.Of(o).String()] = withLabels(o, labels)
		}
	}
	sem := make(chan struct{}, in.concurrency())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i := range changes {
		o := objs[changes[i].Object]
		if changes[i].Action != Configured || o == nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(c *Change) {
			defer wg.Done()
			defer func() { <-sem }()
			r, err := in.Client.Apply(ctx, o, kube.ApplyOptions{DryRun: true})
			if err == nil && r.Before != nil && r.Live != nil {
				c.Fields = objdiff.Fields(r.Before, r.Live, kube.ServerAnnotations...)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("foreseeing the fields of %s (server-side dry run): %w", c.Object, err))
				mu.Unlock()
			}
		}(&changes[i])
	}
	wg.Wait()
	return errors.Join(errs...)
}
