package action

import (
	"context"
	"fmt"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/revision"
	"github.com/istioctl-installer/istioctl/operator/skew"
)

// checkHop is an in-place upgrade's first check: the revision's control plane may move from
// the version it runs to version only as the skew rule in-place-hop allows (skew.Hop, the
// rule precheck's upgrade-hop applies). A hop the rule refuses stops the run before any
// write, unless Force, which makes it a warning. A version that does not parse (a dev
// build) passes, as precheck's does.
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
		v := skew.Hop(cp.Version, version, true)
		if v.OK {
			continue
		}
		object := fmt.Sprintf("Deployment/%s/%s", cp.Namespace, cp.Name)
		if a.Spec.Force {
			events.Emit(event.Event{Type: event.Warning, Object: object, Message: v.String() + " (ignored because of --force)"})
			continue
		}
		return fmt.Errorf("%s: %s\nNothing was written. Upgrade through the versions in between, or install the new version as a revision beside the old one (--revision); --force upgrades anyway", object, v)
	}
	return nil
}
