package migrate

import (
	"context"
	"fmt"
	"slices"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/revision"
)

// A progress record says what an earlier run meant to do, minutes or days ago; the cluster
// may have moved on since (a workload deleted, a namespace deleted or relabelled by someone
// else). A resumed run and a rollback act on an entry of the record only where the cluster
// still bears it out: a workload that exists and whose pods the old or the new revision
// injects, within --namespaces; a namespace that exists and still carries the label value
// the record expects. Every other entry is skipped, with a skipped event saying why.

// Live is what the cluster holds now of what a progress record names: what Decide and
// Reverse check the record against.
type Live struct {
	// Revisions are the cluster's revisions (revision.List).
	Revisions []*revision.Revision
	// Existing are the recorded workloads that exist now.
	Existing map[Workload]bool
	// Labels are, for each recorded relabelled namespace that exists now, its labels.
	Labels map[string]map[string]string
}

// Observe reads the revisions and, for rec (nil: none), which of its workloads and
// relabelled namespaces exist now: one list per kind and namespace of its workloads, one
// of the namespaces.
func Observe(ctx context.Context, c *kube.Client, istioNamespace string, rec *Record) (*Live, error) {
	revs, err := revision.List(ctx, c, istioNamespace)
	if err != nil {
		return nil, err
	}
	l := &Live{Revisions: revs}
	if rec == nil {
		return l, nil
	}
	if l.Existing, l.Labels, err = observe(ctx, c, rec); err != nil {
		return nil, err
	}
	return l, nil
}

// observe reads which of rec's workloads and relabelled namespaces exist, and those
// namespaces' labels.
func observe(ctx context.Context, c *kube.Client, rec *Record) (map[Workload]bool, map[string]map[string]string, error) {
	type kindIn struct{ kind, ns string }
	byKind := map[kindIn][]Workload{}
	for _, w := range rec.workloads() {
		k := kindIn{w.Kind, w.Namespace}
		byKind[k] = append(byKind[k], w)
	}
	existing := map[Workload]bool{}
	for k, ws := range byKind {
		names, err := c.ListMeta(ctx, workloadGVK(ws[0]), k.ns)
		if err != nil {
			return nil, nil, fmt.Errorf("checking the progress record's workloads: %w", err)
		}
		for _, w := range ws {
			existing[w] = names[w.Name] != nil
		}
	}
	labels := map[string]map[string]string{}
	if len(rec.Relabel) == 0 {
		return existing, labels, nil
	}
	nss, err := c.ListMeta(ctx, kube.NamespaceGVK, "")
	if err != nil {
		return nil, nil, fmt.Errorf("checking the progress record's namespaces: %w", err)
	}
	for _, r := range rec.Relabel {
		if ns := nss[r.Namespace]; ns != nil {
			labels[r.Namespace] = ns.Labels
		}
	}
	return existing, labels, nil
}

// injectedBy says whether a pod of w is injected by revision rev.
func (l *Live) injectedBy(w Workload, rev string) bool {
	r := find(l.Revisions, rev)
	if r == nil {
		return false
	}
	return slices.ContainsFunc(r.Workloads, func(x revision.Workload) bool {
		return x.Namespace == w.Namespace && x.Kind == w.Kind && x.Name == w.Name
	})
}

// workload judges a recorded workload for a run between revisions from and to, limited to
// namespaces (nil: all): "" when the run is to restart it, else why not and what it is now.
func (l *Live) workload(w Workload, from, to string, namespaces []string) (event.SkipReason, string) {
	switch {
	case !l.Existing[w]:
		return event.SkipDeleted, ""
	case namespaces != nil && !slices.Contains(namespaces, w.Namespace):
		return event.SkipOutsideNamespaces, ""
	case !l.injectedBy(w, from) && !l.injectedBy(w, to):
		return event.SkipNotInjected, fmt.Sprintf("revisions %s and %s", from, to)
	}
	return "", ""
}

// relabelSkip judges a relabel by its namespace's labels now (exists: whether it exists):
// "" when it still carries the value the relabel changes, else why not and what it is now.
// One rule for the plan and for the write.
func relabelSkip(labels map[string]string, exists bool, r Relabel) (event.SkipReason, string) {
	if !exists {
		return event.SkipDeleted, ""
	}
	v := labels[ownership.LabelRevision]
	if v == "" {
		return event.SkipLabelChanged, fmt.Sprintf("no %s label now, %s recorded", ownership.LabelRevision, r.From)
	}
	if ownership.Rev(v) != ownership.Rev(r.From) {
		return event.SkipLabelChanged, fmt.Sprintf("%s=%s now, %s recorded", ownership.LabelRevision, v, r.From)
	}
	return "", ""
}

// Skip is an entry of a record or a plan left out: the object, why, and what it is now.
type Skip struct {
	Object string
	Reason event.SkipReason
	Now    string
}

// Event is the skipped event that reports s.
func (s Skip) Event() event.Event {
	return event.Event{Type: event.Skipped, Object: s.Object, Message: s.Now, SkipChange: event.SkipChange{SkipReason: s.Reason}}
}

func namespaceRef(ns string) string { return ref.New("Namespace", "", ns).String() }

// checked keeps the workloads of ws that a run between p.From and p.To restarts, limited
// to namespaces (nil: all); it notes the others in p.Skipped and p.Deferred: the record
// keeps them, so that a later run (a rollback too) checks them again and says what it
// left, a deleted workload included.
func (p *Plan) checked(l *Live, ws []Workload, namespaces []string) []Workload {
	var keep []Workload
	for _, w := range ws {
		why, now := l.workload(w, p.From, p.To, namespaces)
		if why == "" {
			keep = append(keep, w)
			continue
		}
		p.Skipped = append(p.Skipped, Skip{Object: w.String(), Reason: why, Now: now})
		p.Deferred = append(p.Deferred, w)
	}
	return keep
}

// relabelChecked says whether r's namespace still carries r.From; if not, it notes why in
// p.Skipped.
func (p *Plan) relabelChecked(l *Live, r Relabel) bool {
	labels, exists := l.Labels[r.Namespace]
	if why, now := relabelSkip(labels, exists, r); why != "" {
		p.Skipped = append(p.Skipped, Skip{Object: namespaceRef(r.Namespace), Reason: why, Now: now})
		return false
	}
	return true
}

// SkipEvents are the skipped events of the plan's left-out entries, in order.
func (p *Plan) SkipEvents() []event.Event {
	out := make([]event.Event, len(p.Skipped))
	for i, s := range p.Skipped {
		out[i] = s.Event()
	}
	return out
}
