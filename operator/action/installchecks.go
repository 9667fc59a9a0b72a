package action

import (
	"context"
	"fmt"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/external"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// checkRelied runs, before anything is written, the relied-on gate: the checks of what the
// spec relies on (an existing control plane, the CA, Prometheus).
func (a *Install) checkRelied(ctx context.Context, env *check.Env, res *spec.Resolved, events event.Sink) error {
	if err := withExternal(env, res); err != nil {
		return err
	}
	// Run even when the spec declares nothing: a cacerts Secret istiod would use is checked.
	return gate(ctx, env, check.GateRelied, a.overrides(), true, events)
}

// checkAdmission runs, before anything is written (and so before a prompt), the admission
// gate (precheck's admission checks, operator/admission): a refusal of what the install
// creates, or a ConfigMap or Secret its workloads need and nobody creates. What admitted is
// not reported: precheck lists it.
func (a *Install) checkAdmission(ctx context.Context, env *check.Env, events event.Sink) error {
	return gate(ctx, env, check.GateAdmission, a.overrides(), false, events)
}

// Blocked is the error of a pre-write gate that stopped a run (check.Blocked), for the
// printer to word.
type Blocked = check.Blocked

// gate runs one pre-write gate the same way for install, upgrade and the revision upgrade:
// an error blocks (a *Blocked) unless set holds the gate's override, which turns it into a
// warning; lesser problems are warning events, passes (with passes) check events.
func gate(ctx context.Context, env *check.Env, g check.Selection, set check.Override, passes bool, events event.Sink) error {
	kept, err := check.Gate(ctx, g, env, set)
	for _, r := range kept {
		switch {
		case r.Passed:
			if passes && r.Severity != check.Info {
				events.Emit(event.Event{Type: event.Check, Object: r.Object, Message: r.Message})
			}
		default:
			msg := r.Message
			if r.Severity == check.Error {
				msg += " (ignored because of " + check.LiftedBy(g).Flag() + ")"
			}
			events.Emit(event.Event{Type: event.Warning, Object: r.Object, Message: msg})
		}
	}
	return err
}

// overrides are the run's options that lift gates: --force and --take-ownership, each
// lifting only the gates that name it.
func (a *Install) overrides() check.Override {
	var set check.Override
	if a.Spec.Force {
		set |= check.Force
	}
	if a.TakeOwnership {
		set |= check.TakeOwnership
	}
	return set
}

// checkEnv is what the checks before an install look at.
func (a *Install) checkEnv(client *kube.Client, res *spec.Resolved, manifests []render.Manifest) *check.Env {
	return &check.Env{Client: client, IstioNamespace: a.ownerOf(res).Namespace, Revision: res.IOP.Spec.Revision, Manifests: manifests}
}

// withExternal fills in what the checks need to know of what the spec relies on.
func withExternal(env *check.Env, res *spec.Resolved) error {
	d := external.FromSpec(res.IOP)
	if d.Empty() {
		return nil
	}
	env.External = d
	if d.Relies(component.Base) {
		r, err := render.NewRenderer(res.IOP.Spec.InstallPackagePath)
		if err != nil {
			return err
		}
		if env.BaseCRDs, err = r.BaseCRDNames(); err != nil {
			return err
		}
	}
	return nil
}

// checkOwnership is the ownership gate of a run: rendered objects that exist and that
// istioctl did not install (a Helm release's, ones made by hand) stop it, named with their
// managers, unless TakeOwnership adopts them (returned: the run announces each, so the
// gate's lifted errors are not reported again). It reads with the run's metadata lists,
// which the apply then reuses.
func (a *Install) checkOwnership(ctx context.Context, in *install.Run, manifests []render.Manifest) ([]ownership.Foreign, error) {
	foreign, err := in.ForeignObjects(ctx, manifests)
	if err != nil || len(foreign) == 0 {
		return nil, err
	}
	if _, err := check.Gate(ctx, check.GateOwnership, &check.Env{Foreign: foreign}, a.overrides()); err != nil {
		return nil, err
	}
	return foreign, nil
}

// namespaceMeta is what the install sets on the istio namespace, created or not: the
// network label istiod and the injector fall back to (values.global.network), and a
// remote's topology.istio.io/controlPlaneClusters (spec.external.remote.controlPlaneClusters).
func namespaceMeta(res *spec.Resolved) map[string]install.NamespaceMeta {
	var m install.NamespaceMeta
	if n, _ := spec.Lookup(res.IOP.Spec.Values, "global", "network"); n != nil && n != "" {
		m.Labels = map[string]string{spec.LabelNetwork: fmt.Sprint(n)}
	}
	if ext := res.IOP.Spec.External; ext != nil && ext.Remote != nil && ext.Remote.ControlPlaneClusters != "" {
		m.Annotations = map[string]string{v1alpha1.AnnotationControlPlaneClusters: ext.Remote.ControlPlaneClusters}
	}
	if m.Labels == nil && m.Annotations == nil {
		return nil
	}
	return map[string]install.NamespaceMeta{res.IOP.IstioNamespace(): m}
}
