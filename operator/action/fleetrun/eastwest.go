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
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// eastWestGateway is the Service of the eastwest profile's gateway.
const eastWestGateway = "istio-eastwestgateway"

// addressWait bounds the wait for an east-west gateway's load balancer address.
const addressWait = 2 * time.Minute

// installEastWest installs the member's east-west gateway, when the fleet gives it one,
// once its control plane stands (the gateway is injected by that istiod; its expose objects
// are Istio resources): an install of its own, named eastwest, as upstream's guides make it.
// It says whether the run wrote anything.
func (a *Install) installEastWest(ctx context.Context, f *fleet.Fleet, m *Member, hooks *schedule.Hooks) (bool, error) {
	opts, ok := f.EastWest(m.cluster, m.Install.Revision)
	if !ok {
		return false, nil
	}
	in := &action.Install{Config: m.cfg, Spec: opts, ReadinessTimeout: a.ReadinessTimeout, Events: event.InCluster(orDiscard(a.Events), m.Name),
		Hooks: hooks.Scope("eastwest")}
	r, err := in.Run(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("its east-west gateway: %w", err)
	}
	return r.Applied+r.Pruned > 0, nil
}

// needsAddress says m is a remote whose file gives no remotePilotAddress: it gets the
// address of its primary's east-west gateway.
func needsAddress(m *Member) bool {
	return m.Primary != "" && m.cluster.RemotePilotAddress == ""
}

// planAddress plans such a remote again with the address its primary's gateway already has
// (a re-run), so its plan is what the run does; on a first run the address comes later.
func (a *Install) planAddress(ctx context.Context, p *Plan, m *Member) {
	if !needsAddress(m) || m.Install == nil {
		return
	}
	primary := p.members()[m.Primary]
	addr := ""
	if primary != nil && primary.Reached() {
		addr, _ = lbAddress(ctx, primary, 0, nil)
	}
	if addr == "" {
		m.Notes = append(m.Notes, "remotePilotAddress: the load balancer address "+m.Primary+"'s east-west gateway gets, once it has one")
		return
	}
	m.address = addr
	m.installer.Spec = p.f.WithAddress(m.cluster, addr)
	m.Install, m.Err = m.installer.Plan(ctx)
}

// withAddress is the install of m and its plan: for a remote that needs its primary's
// gateway address, once that address is there (a load balancer address, read from the
// Service's status: never dialled), planned again when it is not the one planned with.
func (a *Install) withAddress(ctx context.Context, p *Plan, m *Member) (*action.Install, *action.InstallPlan, error) {
	if !needsAddress(m) {
		return m.installer, m.Install, nil
	}
	addr, err := lbAddress(ctx, p.members()[m.Primary], addressWait, a.Events)
	if err != nil {
		return nil, nil, err
	}
	if addr == m.address {
		return m.installer, m.Install, nil
	}
	in := *m.installer
	in.Spec = p.f.WithAddress(m.cluster, addr)
	in.Replan = false
	return &in, nil, nil
}

// lbAddress waits for the load balancer address of m's east-west gateway; a stalled watch
// of its Service is a watch-stalled event of m's in events (nil: none).
func lbAddress(ctx context.Context, m *Member, wait time.Duration, events event.Sink) (string, error) {
	if events != nil {
		events = event.InCluster(events, m.Name)
	}
	return gatewayAddress(ctx, m.client, m.Namespace, m.Name, wait, events)
}

// gatewayAddress is the load balancer address of the east-west gateway of cluster (its
// Service in namespace, read through client): one read for a wait of 0, else a watch of
// the Service up to wait, which says when its load balancer gave it one.
func gatewayAddress(ctx context.Context, client *kube.Client, namespace, cluster string, wait time.Duration, events event.Sink) (string, error) {
	probe := &unstructured.Unstructured{}
	probe.SetGroupVersionKind(kube.ServiceGVK)
	probe.SetNamespace(namespace)
	probe.SetName(eastWestGateway)
	noAddress := func(err error) error {
		msg := fmt.Sprintf("the east-west gateway of cluster %s (Service %s/%s) has no load balancer address after %s: check its cloud load balancer, or give remotePilotAddress in the fleet file", cluster, namespace, eastWestGateway, wait)
		if err != nil {
			return fmt.Errorf("%s (%w)", msg, err)
		}
		return errors.New(msg)
	}
	if wait <= 0 {
		if svc, err := client.Get(ctx, probe); err == nil && svc != nil {
			if addr := ingressAddress(svc); addr != "" {
				return addr, nil
			}
		}
		return "", noAddress(nil)
	}
	w := client.NewWatcher()
	if events != nil {
		w.OnStall(func(s kube.Stall) {
			events.Emit(event.Stalled(event.Event{}, s.Watch(), s.LastHeard, s.Missed, s.Advice()))
		})
	}
	defer w.Stop()
	dctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var addr string
	var lastErr error
	err := w.Await(dctx, func() (bool, error) {
		svc, err := w.Get(ctx, probe, "")
		if err != nil {
			lastErr = err
			return false, nil
		}
		if svc != nil {
			addr = ingressAddress(svc)
		}
		return addr != "", nil
	})
	switch {
	case err == nil:
		return addr, nil
	case ctx.Err() != nil:
		return "", ctx.Err()
	case dctx.Err() != nil:
		return "", noAddress(lastErr)
	}
	return "", err
}

// verifiedSpec is the spec fleet verify checks cluster c against: with a remote's address
// read from its primary's east-west gateway when the file gives none, as the install did.
func (a *Fleet) verifiedSpec(ctx context.Context, f *fleet.Fleet, c *fleet.Cluster, primaryNamespace string) (spec.Options, error) {
	if c.Primary == "" || c.RemotePilotAddress != "" {
		return f.Spec(c), nil
	}
	var primary *fleet.Cluster
	for _, o := range f.Clusters {
		if o.Name == c.Primary {
			primary = o
		}
	}
	client, err := a.member(primary, a.clusterWarn(primary.Name)).Connect(ctx)
	if err != nil {
		return spec.Options{}, fmt.Errorf("its istiod address is %s's east-west gateway's, and %s cannot be reached: %w", primary.Name, primary.Name, err)
	}
	addr, err := gatewayAddress(ctx, client, primaryNamespace, primary.Name, 0, nil)
	if err != nil {
		return spec.Options{}, err
	}
	return f.WithAddress(c, addr), nil
}

// ingressAddress is a Service's first load balancer address (IP, else host name).
func ingressAddress(svc *unstructured.Unstructured) string {
	ings, _, _ := unstructured.NestedSlice(svc.Object, "status", "loadBalancer", "ingress")
	for _, i := range ings {
		ing, _ := i.(map[string]any)
		for _, k := range []string{"ip", "hostname"} {
			if v, _ := ing[k].(string); v != "" {
				return v
			}
		}
	}
	return ""
}
