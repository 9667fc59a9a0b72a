package action

import (
	"context"
	"fmt"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// A restore (rollback, install --atomic) re-installs what a record says: before it writes,
// it is checked (the record's seal: history.Record.Untrusted) and shown (what it changes in
// RBAC and in the k8s overlays), since both decide what istiod may do.

// trusted refuses an untrusted record, naming it and what to do.
func trusted(t *history.Record) error {
	if err := t.Untrusted(); err != nil {
		return fmt.Errorf("refusing to re-install install record %d of revision %s: %w", t.Number, history.Rev(t.Revision), err)
	}
	return nil
}

// review finds what the restore of p.Target changes in RBAC (against the live objects) and
// in the overlays (against the newest sealed record of the revision: what istioctl last
// installed), keeps it in p and says it, a warning per object and per overlay patch.
func (a *Rollback) review(ctx context.Context, r *run, p *RollbackPlan, records []*history.Record) error {
	var err error
	if p.RBAC, err = p.Install.apply.RBACChanges(ctx, p.Install.manifests, p.Install.stale); err != nil {
		return fmt.Errorf("reading what the rollback changes in RBAC: %w", err)
	}
	for _, c := range p.RBAC {
		r.events.Emit(event.Event{Type: event.Warning, Object: c.Object,
			Message: fmt.Sprintf("record %d changes what it grants: %s", p.Target.Number, strings.Join(c.Lines, "; "))})
	}
	var current *history.Record
	for _, rec := range records {
		if rec.Untrusted() == nil {
			current = rec // the newest sealed one, records being sorted
		}
	}
	from := "no sealed record"
	var fromIOP *v1alpha1.IstioOperator
	if current != nil {
		from = fmt.Sprintf("record %d", current.Number)
		// A spec that no longer resolves shows every overlay of the target as added.
		if res, err := spec.Resolve(spec.Options{Files: []string{"-"}, Stdin: strings.NewReader(current.Spec)}); err == nil {
			fromIOP = res.IOP
		}
	}
	p.Overlays = render.OverlayChanges(fromIOP, p.Install.res.IOP)
	for _, l := range p.Overlays {
		r.events.Emit(event.Event{Type: event.Warning,
			Message: fmt.Sprintf("record %d changes the k8s overlays (from %s): %s", p.Target.Number, from, l)})
	}
	return nil
}
