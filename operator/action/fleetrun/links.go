package fleetrun

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/fleet"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/schedule"
)

// planLinks decides each link: the ones the file implies are created, or checked when
// there already; the link Secrets of this fleet it no longer implies are removed, in the
// clusters of the file and in those it dropped. Only link Secrets this istioctl wrote
// (link.Written) are removed, and a cluster counts as dropped only by the identity its
// links record (planDropped), never by a context name; reach connects to a cluster and
// reads its identity (Fleet.reach).
func (a *Fleet) planLinks(ctx context.Context, p *Plan, desired func(ns func(*fleet.Cluster) string) []fleet.Link, reach func(context.Context, *Member) bool) ([]*LinkPlan, error) {
	members := p.members()
	ns := func(c *fleet.Cluster) string {
		if m := members[c.Name]; m.Namespace != "" {
			return m.Namespace
		}
		return resolvedNamespace(p.f, c)
	}
	found := map[string]map[string]*unstructured.Unstructured{}
	var records []linkRecord
	for _, m := range p.Members {
		if !m.Reached() {
			continue
		}
		secrets, err := m.client.ListIn(ctx, kube.SecretGVK, ns(m.cluster), ownership.FleetSelector(p.Fleet))
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", m.Name, err)
		}
		found[m.Name] = map[string]*unstructured.Unstructured{}
		for i := range secrets {
			s := &secrets[i]
			found[m.Name][s.GetName()] = s
			if link.Written(s) {
				records = append(records, recordOf(m.Name, s))
			}
		}
	}
	var out []*LinkPlan
	for _, l := range desired(ns) {
		lp := &LinkPlan{Into: l.Into.Name, From: l.From.Name, Secret: l.Secret.Namespace + "/" + l.Secret.Name, Action: LinkCreate, link: &l, fromContext: l.From.Context}
		if s := found[l.Into.Name][l.Secret.Name]; s != nil {
			lp.Action = LinkCheck
			delete(found[l.Into.Name], l.Secret.Name)
		}
		out = append(out, lp)
	}
	for _, m := range p.Members {
		out = append(out, p.removals(m.Name, nil, found[m.Name])...)
	}
	return append(out, a.planDropped(ctx, p, records, reach)...), nil
}

// removals are the link Secrets of into to remove, in name order (holder: the cluster
// when the file no longer names it): those this istioctl wrote. Any other Secret with the
// fleet's label is kept, and the plan says so.
func (p *Plan) removals(into string, holder *Member, secrets map[string]*unstructured.Unstructured) []*LinkPlan {
	var out []*LinkPlan
	for _, n := range slices.Sorted(maps.Keys(secrets)) {
		s := secrets[n]
		obj := ref.Of(s).String()
		if !link.Written(s) {
			p.Kept = append(p.Kept, KeptLink{Cluster: into, Object: obj, Reason: event.KeptNotALink,
				Message: fmt.Sprintf("it carries the label %s but was not applied as a link by %s: delete it yourself if it is of no use", ownership.FleetSelector(p.Fleet), ownership.LinkFieldManager)})
			continue
		}
		ann := s.GetAnnotations()
		out = append(out, &LinkPlan{Into: into, From: ann[ownership.AnnotationCluster], Secret: s.GetNamespace() + "/" + n,
			Action: LinkRemove, fromContext: ann[ownership.AnnotationFleetFrom], fromUID: ann[ownership.AnnotationFleetFromUID], obj: s, holder: holder})
	}
	return out
}

// runLink carries out one link step once the clusters it needs stand: a create or check
// through create-remote-secret's action (Keep: a link whose token still authenticates is
// left as it is), a removal with the tokens issued for it.
func (a *Install) runLink(ctx context.Context, p *Plan, l *LinkPlan, members map[string]*Member, hooks *schedule.Hooks) (event.LinkOutcome, error) {
	into := p.holderOf(l)
	if l.Action == LinkRemove {
		if l.holder == nil {
			// After the cluster's own install: one writer of it at a time in this run.
			_ = hooks.Wait(ctx, l.Into)
		}
		return a.removeLink(ctx, p, l, into, a.Events)
	}
	// The reads and the token in l.From once it stands; the write once l.Into does too
	// (a cluster not reached: its install's end first, which says why).
	needs := []string{l.From}
	if !into.Reached() {
		needs = append(needs, l.Into)
	}
	if err := hooks.Wait(ctx, needs...); err != nil {
		return event.LinkLeftOut, needError(err)
	}
	rs := a.remoteSecret(p, l, members[l.From], into)
	rs.WriteGate = func(ctx context.Context) (func(), error) {
		if err := hooks.Wait(ctx, l.Into); err != nil {
			return nil, err
		}
		into.mu.Lock() // one writer of a cluster at a time in this run (its lock)
		return into.mu.Unlock, nil
	}
	res, err := rs.Run(ctx, nil)
	switch {
	case unmet(err):
		return event.LinkLeftOut, needError(err)
	case err != nil:
		return event.LinkFailed, err
	case res.Unchanged:
		return event.LinkUnchanged, nil
	case res.Created:
		return event.LinkCreated, nil
	}
	return event.LinkRotated, nil
}

// remoteSecret is create-remote-secret's action making link l from cluster from into
// cluster into: the link records from's identity (a label-like annotation a kept link must
// carry) beside the context it was reached through (a hint: another name for the same
// cluster rewrites nothing and revokes no token).
func (a *Fleet) remoteSecret(p *Plan, l *LinkPlan, from, into *Member) *action.CreateRemoteSecret {
	return &action.CreateRemoteSecret{
		Config: &action.Config{Kube: from.cfg.Kube, IstioNamespace: l.link.Secret.Namespace, Lock: a.Lock, Warn: a.clusterWarn(l.Into), Version: a.Version,
			NewClient: func() (*kube.Client, error) { return from.client, nil }},
		Name: l.From, Type: string(l.link.Type), ApplyTo: into.Context, CreateServiceAccount: true,
		Labels: ownership.FleetLabels(p.MeshID, p.Fleet), Keep: true,
		Annotations: map[string]string{ownership.AnnotationFleetFromUID: from.uid},
		Hints:       map[string]string{ownership.AnnotationFleetFrom: from.Context},
		Target:      into.client,
	}
}

// holderOf is the cluster holding l's Secret: a cluster of the file, or one it dropped.
func (p *Plan) holderOf(l *LinkPlan) *Member {
	if l.holder != nil {
		return l.holder
	}
	return p.members()[l.Into]
}

// removeLink deletes a link Secret under its cluster's lock, as it was read and only while
// it is still a link of this fleet that istioctl wrote (else it is kept, and events say
// so), then the tokens the cluster whose credentials it held issued for it (when that
// cluster is identified and answers: else they stay, and the result says so).
func (a *Fleet) removeLink(ctx context.Context, p *Plan, l *LinkPlan, into *Member, events event.Sink) (event.LinkOutcome, error) {
	if into == nil || !into.Reached() {
		if into != nil && into.Err != nil {
			return event.LinkLeftOut, fmt.Errorf("cluster %s: %w", l.Into, into.Err)
		}
		return event.LinkLeftOut, fmt.Errorf("cluster %s cannot be reached", l.Into)
	}
	if l.obj == nil {
		return event.LinkLeftOut, fmt.Errorf("no link Secret of cluster %s was read to remove", l.Into)
	}
	ns := l.obj.GetNamespace()
	var revokeErr error
	var kept *unstructured.Unstructured
	into.mu.Lock()
	err := into.cfg.WriteLocked(ctx, into.client, "fleet-links", ns, func(ctx context.Context) error {
		live, err := into.client.DeleteAsJudged(ctx, l.obj, false, func(live *unstructured.Unstructured) bool { return fleetLink(live, p.Fleet) })
		if err != nil || live != nil {
			kept = live
			return err
		}
		// In the same run: the tokens go with the link they were issued for.
		revokeErr = a.revokeTokens(ctx, p, l, into, ns)
		return nil
	})
	into.mu.Unlock()
	switch {
	case err != nil:
		return event.LinkFailed, err
	case kept != nil:
		reason, why := event.KeptNotALink, "it changed since the plan read it and is no longer a link of this fleet that istioctl wrote"
		if kept.GetUID() != l.obj.GetUID() {
			reason, why = event.KeptRecreated, "it was deleted and created again by someone else since the plan read it"
		}
		keptEvent(events, KeptLink{Cluster: l.Into, Object: l.secretRef().String(), Reason: reason, Message: why})
		return event.LinkUnchanged, nil
	case revokeErr != nil:
		return event.LinkRemoved, fmt.Errorf("removed, but the tokens issued for it stay: %w", revokeErr)
	}
	return event.LinkRemoved, nil
}

// fleetLink is the rule a removal is judged by again: a link Secret istioctl wrote that
// carries fleet's label.
func fleetLink(s *unstructured.Unstructured, fleet string) bool {
	return s.GetLabels()[ownership.LabelFleetName] == fleet && link.Written(s)
}

// revokeTokens deletes the token Secrets the link's credentials came from: those the
// cluster it records (by identity, never by context name) issued for the cluster the link
// was in alone.
func (a *Fleet) revokeTokens(ctx context.Context, p *Plan, l *LinkPlan, into *Member, ns string) error {
	if l.fromContext == "" && l.fromUID == "" {
		return nil
	}
	byHand := fmt.Sprintf("once no link uses them, delete them in the cluster it read: kubectl -n %s delete secret -l %s=%s", ns, ownership.LabelTokenFor, into.uid)
	if l.fromUID == "" {
		return fmt.Errorf("it records context %s but no cluster identity (an older istioctl wrote it), and a context name alone revokes nothing; %s", l.fromContext, byHand)
	}
	var source *Member
	for _, m := range append(append([]*Member(nil), p.Members...), p.dropped...) {
		if m.Reached() && m.uid == l.fromUID {
			source = m
			break
		}
	}
	if source == nil {
		return fmt.Errorf("the cluster it read (kube-system UID %s, context %s) is not reached in this run; %s", l.fromUID, l.fromContext, byHand)
	}
	tokens, err := link.TokenSecrets(ctx, source.client, ns, ownership.ReaderServiceAccount)
	if err != nil {
		return err
	}
	for _, t := range tokens {
		if t.ForCluster == into.uid {
			if err := t.Delete(ctx, source.client, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// keptEvent says a link, or a cluster's links, stay and why.
func keptEvent(events event.Sink, k KeptLink) {
	event.Stamped(orDiscard(events)).Emit(event.Event{Type: event.Kept, Cluster: k.Cluster, Object: k.Object, Message: k.Message,
		KeptChange: event.KeptChange{KeptReason: k.Reason}})
}

// linkEvent says what happened to a link, in the cluster holding it.
func linkEvent(events event.Sink, l *LinkPlan, outcome event.LinkOutcome, err error) {
	e := event.Event{Type: event.Link, Cluster: l.Into, Object: l.secretRef().String(), Message: fmt.Sprintf("%s reads %s with it", l.Into, l.From),
		LinkChange: event.LinkChange{LinkOutcome: outcome}}
	if l.Action == LinkRemove {
		e.Message = fmt.Sprintf("held %s's credentials; this fleet no longer links them", l.From)
	}
	if err != nil {
		e.Error = err.Error()
	}
	event.Stamped(orDiscard(events)).Emit(e)
}

// writeSecret applies a Secret as the install's field manager, the namespace created when
// missing; one already as it is stays untouched.
func writeSecret(ctx context.Context, c *kube.Client, s *corev1.Secret) error {
	return link.WriteAs(ctx, c, s, ownership.FieldManager)
}
