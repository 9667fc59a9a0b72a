package action

import (
	"context"
	"fmt"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/revision"
)

// checkHop is an in-place upgrade's hop gate: the revision's control plane may move from
// the version it runs to version only as the skew rules allow (check's upgrade-hop, which
// precheck runs too). A hop they refuse stops the run before any write, unless Force, which
// makes it a warning. A version that does not parse (a dev build) passes, as precheck's does.
func (a *Install) checkHop(ctx context.Context, client *kube.Client, owner ownership.Owner, version string, events event.Sink) error {
	if version == "" {
		return nil
	}
	cps, err := revision.ControlPlanes(ctx, client, owner.Namespace)
	if err != nil {
		return fmt.Errorf("reading the control plane to upgrade: %w", err)
	}
	for _, cp := range cps {
		if cp.Revision != owner.Rev() || cp.Version == "" {
			continue
		}
		h := &check.Hop{Object: ref.New("Deployment", cp.Namespace, cp.Name).String(), From: cp.Version, InPlace: true}
		if err := hopGate(ctx, client, h, version, a.overrides(), events); err != nil {
			return err
		}
	}
	return nil
}

// hopGate runs the hop gate on one move to version; set lifts it (check.Force).
func hopGate(ctx context.Context, client *kube.Client, h *check.Hop, version string, set check.Override, events event.Sink) error {
	return gate(ctx, &check.Env{Client: client, Version: version, Hop: h}, check.GateHop, set, false, events)
}
