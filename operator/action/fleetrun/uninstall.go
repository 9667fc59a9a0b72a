package fleetrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/fleet"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/schedule"
)

// Uninstall is x fleet uninstall: every link Secret of the fleet removed first (in the
// clusters of the file and in those it dropped), then the clusters in the reverse of the
// install's order, each by the Uninstall action of its spec: the remotes, then each
// control plane once the clusters it serves are removed.
type Uninstall struct {
	*Fleet
	// Purge removes every revision and the CRDs in each cluster, and the cacerts Secrets
	// the fleet wrote.
	Purge bool
	// Timeout bounds each cluster's wait for the removed objects to be gone.
	Timeout time.Duration
	// Replan: see Install.Replan.
	Replan bool
	Events event.Sink
}

// Plan reads every cluster at once: what its uninstall removes, and the fleet's links.
func (a *Uninstall) Plan(ctx context.Context) (*Plan, error) {
	f, _, err := a.loadFleet(false)
	if err != nil {
		return nil, err
	}
	p, err := a.planMembers(ctx, f, func(m *Member) {
		if !a.reach(ctx, m) {
			return
		}
		m.uninstall = &action.Uninstall{Config: m.cfg, Spec: f.Spec(m.cluster), Purge: a.Purge, IgnoreNotFound: true, Timeout: a.Timeout,
			Replan: a.Replan, Events: event.InCluster(orDiscard(a.Events), m.Name)}
		if m.Uninstall, m.Err = m.uninstall.Plan(ctx); m.Uninstall != nil {
			m.Namespace = m.Uninstall.Namespace
		}
	})
	if err != nil {
		return nil, err
	}
	p.Links, err = a.planLinks(ctx, p, func(func(*fleet.Cluster) string) []fleet.Link { return nil }, a.reach)
	return p, err
}

// Run removes the links, then the clusters (nil plan: it plans first), by the
// plan-then-write protocol as Install.Run.
func (a *Uninstall) Run(ctx context.Context, p *Plan) (*Result, error) {
	return a.execute(ctx, a.Events, p, event.OperationUninstall, a.Plan, a.remove)
}

// remove removes the links, then the clusters, each as soon as what it serves is gone.
func (a *Uninstall) remove(ctx context.Context, p *Plan) (*Result, error) {
	p.sayKept(a.Events)
	res := p.newResult()
	hooks := schedule.New()
	links := make([]schedule.Node, len(p.Links))
	for i, l := range p.Links {
		links[i] = schedule.Node{Name: "link " + l.Into + " " + l.Secret, Run: func(ctx context.Context) error {
			outcome, err := a.removeLink(ctx, p, l, p.holderOf(l), a.Events)
			res.Links[i] = linkRow(l, outcome, err)
			linkEvent(a.Events, l, outcome, err)
			return err
		}}
	}
	hooks.Run(ctx, links, nil)
	// The clusters once every link is gone: each waits, on its way, for those it serves.
	members := make([]schedule.Node, len(p.Members))
	for i, m := range p.Members {
		members[i] = schedule.Node{Name: m.Name, Run: func(ctx context.Context) error {
			start := time.Now()
			outcome, err := a.removeMember(ctx, p, m, hooks, res)
			res.Clusters[i] = clusterRow(m, outcome, err, start)
			return err
		}}
	}
	hooks.Run(ctx, members, nil)
	return res, res.end(ctx)
}

// errLinksStay skips a cluster some of whose links stay: removing its control plane (or
// its credentials' issuer) first would leave them pointing at nothing.
var errLinksStay = errors.New("some of the links to or from it could not be removed")

// removeMember uninstalls a cluster once the clusters it serves are removed and its links
// are gone.
func (a *Uninstall) removeMember(ctx context.Context, p *Plan, m *Member, hooks *schedule.Hooks, res *Result) (event.ClusterOutcome, error) {
	if m.Err != nil {
		return event.ClusterFailed, m.Err
	}
	for _, l := range res.Links {
		if l.Error != "" && (l.Into == m.Name || l.From == m.Name) {
			return event.ClusterSkipped, errLinksStay
		}
	}
	var served []string
	for _, o := range p.f.Served(m.cluster) {
		served = append(served, o.Name)
	}
	if err := hooks.Wait(ctx, served...); err != nil {
		return event.ClusterSkipped, needError(err)
	}
	if ew, ok := p.f.EastWest(m.cluster, m.Uninstall.Revision); ok && !a.Purge {
		// The east-west gateway's own install first (a purge takes it with the rest).
		u := &action.Uninstall{Config: m.cfg, Spec: ew, IgnoreNotFound: true, Timeout: a.Timeout, Events: m.uninstall.Events}
		if _, err := u.Run(ctx, nil); err != nil {
			return event.ClusterFailed, fmt.Errorf("its east-west gateway: %w", err)
		}
	}
	if _, err := m.uninstall.Run(ctx, m.Uninstall); err != nil {
		return event.ClusterFailed, err
	}
	if a.Purge {
		if err := a.removeCACerts(ctx, p.f, m); err != nil {
			return event.ClusterFailed, err
		}
	}
	if m.Uninstall.Nothing != "" {
		return event.ClusterUnchanged, nil
	}
	return event.ClusterRemoved, nil
}

// removeCACerts deletes the cacerts Secret the fleet gave the cluster.
func (a *Uninstall) removeCACerts(ctx context.Context, f *fleet.Fleet, m *Member) error {
	if f.CACertsOf(m.cluster) == nil {
		return nil
	}
	s := &unstructured.Unstructured{}
	s.SetGroupVersionKind(kube.SecretGVK)
	s.SetNamespace(m.Namespace)
	s.SetName("cacerts")
	return m.cfg.WriteLocked(ctx, m.client, "fleet-cacerts", m.Namespace, func(ctx context.Context) error {
		return m.client.Delete(ctx, s, false)
	})
}
