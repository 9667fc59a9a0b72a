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
	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/schedule"
)

// planLinks decides each link: the ones the file implies are created, or checked when
// there already; the ones of this fleet (its labels) it no longer implies are removed, in
// the clusters of the file and in those an earlier run linked and the file dropped (reached
// through the context the links' annotation names).
func (a *Fleet) planLinks(ctx context.Context, p *Plan, desired func(ns func(*fleet.Cluster) string) []fleet.Link) ([]*LinkPlan, error) {
	members := p.members()
	ns := func(c *fleet.Cluster) string {
		if m := members[c.Name]; m.Namespace != "" {
			return m.Namespace
		}
		return resolvedNamespace(p.f, c)
	}
	found := map[string]map[string]*unstructured.Unstructured{}
	// dropped: the contexts of clusters the file no longer names, by the cluster name its
	// links carry.
	dropped := map[string]string{}
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
			if from := s.GetAnnotations()[ownership.AnnotationFleetFrom]; from != "" && !p.hasContext(from) {
				dropped[from] = s.GetAnnotations()[ownership.AnnotationCluster]
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
		out = append(out, removals(m.Name, found[m.Name])...)
	}
	more, err := a.planDropped(ctx, p, dropped)
	return append(out, more...), err
}

func (p *Plan) hasContext(ctx string) bool {
	for _, m := range p.Members {
		if m.Context == ctx {
			return true
		}
	}
	return false
}

// removals are the link Secrets of into to remove, in name order.
func removals(into string, secrets map[string]*unstructured.Unstructured) []*LinkPlan {
	var out []*LinkPlan
	for _, n := range slices.Sorted(maps.Keys(secrets)) {
		s := secrets[n]
		out = append(out, &LinkPlan{Into: into, From: s.GetAnnotations()[ownership.AnnotationCluster], Secret: s.GetNamespace() + "/" + n,
			Action: LinkRemove, fromContext: s.GetAnnotations()[ownership.AnnotationFleetFrom]})
	}
	return out
}

// planDropped adds, for each cluster the file no longer names but this fleet's links still
// point at, a member reached through that context (installed by nothing: its control plane
// stays) and the removal of this fleet's links in it. One that cannot be reached is left
// out with its error.
func (a *Fleet) planDropped(ctx context.Context, p *Plan, dropped map[string]string) ([]*LinkPlan, error) {
	var out []*LinkPlan
	for _, kctx := range slices.Sorted(maps.Keys(dropped)) {
		name := dropped[kctx]
		if name == "" {
			name = "context " + kctx
		}
		m := a.newMember(&fleet.Cluster{Name: name, Context: kctx})
		m.Role = "dropped"
		p.dropped = append(p.dropped, m)
		if !a.reach(ctx, m) {
			out = append(out, &LinkPlan{Into: name, Secret: "the link Secrets of fleet " + p.Fleet, Action: LinkRemove})
			continue
		}
		secrets, err := m.client.ListIn(ctx, kube.SecretGVK, "", ownership.FleetSelector(p.Fleet))
		if err != nil {
			m.Err = err
			continue
		}
		byName := map[string]*unstructured.Unstructured{}
		for j := range secrets {
			byName[secrets[j].GetName()] = &secrets[j]
		}
		out = append(out, removals(m.Name, byName)...)
	}
	return out, nil
}

// runLink carries out one link step once the clusters it needs stand: a create or check
// through create-remote-secret's action (Keep: a link whose token still authenticates is
// left as it is), a removal with the tokens issued for it.
func (a *Install) runLink(ctx context.Context, p *Plan, l *LinkPlan, members map[string]*Member, hooks *schedule.Hooks) (event.LinkOutcome, error) {
	into := members[l.Into]
	if into == nil {
		into = p.droppedMember(l.Into)
	}
	if l.Action == LinkRemove {
		if members[l.Into] != nil {
			// After the cluster's own install: one writer of it at a time in this run.
			_ = hooks.Wait(ctx, l.Into)
		}
		return a.removeLink(ctx, p, l, into)
	}
	if err := hooks.Wait(ctx, l.Into, l.From); err != nil {
		return event.LinkLeftOut, needError(err)
	}
	from := members[l.From]
	into.mu.Lock()
	defer into.mu.Unlock()
	rs := &action.CreateRemoteSecret{
		Config: &action.Config{Kube: from.cfg.Kube, IstioNamespace: l.link.Secret.Namespace, Lock: a.Lock, Warn: a.clusterWarn(l.Into), Version: a.Version,
			NewClient: func() (*kube.Client, error) { return from.client, nil }},
		Name: l.From, Type: string(l.link.Type), ApplyTo: into.Context, CreateServiceAccount: true,
		Labels: ownership.FleetLabels(p.MeshID, p.Fleet), Annotations: map[string]string{ownership.AnnotationFleetFrom: from.Context}, Keep: true,
	}
	res, err := rs.Run(ctx, nil)
	switch {
	case err != nil:
		return event.LinkFailed, err
	case res.Unchanged:
		return event.LinkUnchanged, nil
	case res.Created:
		return event.LinkCreated, nil
	}
	return event.LinkRotated, nil
}

func (p *Plan) droppedMember(name string) *Member {
	for _, m := range p.dropped {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// removeLink deletes a link Secret under its cluster's lock, then the tokens the cluster
// whose credentials it held issued for it (when that cluster answers: else they stay, and
// the result says so).
func (a *Fleet) removeLink(ctx context.Context, p *Plan, l *LinkPlan, into *Member) (event.LinkOutcome, error) {
	if into == nil || !into.Reached() {
		return event.LinkLeftOut, fmt.Errorf("cluster %s cannot be reached", l.Into)
	}
	secret := l.secretRef()
	ns, name := secret.Namespace, secret.Name
	var revokeErr error
	into.mu.Lock()
	err := into.cfg.WriteLocked(ctx, into.client, "fleet-links", ns, func(ctx context.Context) error {
		if err := link.DeleteLink(ctx, into.client, ns, name, nil, true, false); err != nil {
			return err
		}
		// In the same run: the tokens go with the link they were issued for.
		revokeErr = a.revokeTokens(ctx, p, l, into, ns)
		return nil
	})
	into.mu.Unlock()
	if err != nil {
		return event.LinkFailed, err
	}
	if revokeErr != nil {
		return event.LinkRemoved, fmt.Errorf("removed, but the tokens issued for it stay: %w", revokeErr)
	}
	return event.LinkRemoved, nil
}

// revokeTokens deletes the token Secrets the link's credentials came from: those its
// source cluster issued for the cluster the link was in alone.
func (a *Fleet) revokeTokens(ctx context.Context, p *Plan, l *LinkPlan, into *Member, ns string) error {
	if l.fromContext == "" {
		return nil
	}
	var source *kube.Client
	for _, m := range append(append([]*Member(nil), p.Members...), p.dropped...) {
		if m.Context == l.fromContext && m.Reached() {
			source = m.client
		}
	}
	if source == nil {
		return fmt.Errorf("context %s cannot be reached", l.fromContext)
	}
	uid, err := link.ClusterUID(ctx, into.client)
	if err != nil {
		return err
	}
	tokens, err := link.TokenSecrets(ctx, source, ns, ownership.ReaderServiceAccount)
	if err != nil {
		return err
	}
	for _, t := range tokens {
		if t.ForCluster == uid {
			if err := t.Delete(ctx, source, false); err != nil {
				return err
			}
		}
	}
	return nil
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
