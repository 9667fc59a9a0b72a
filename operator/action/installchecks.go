package action

import (
	"context"
	"fmt"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/external"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// checkRelied runs, before anything is written, the checks of what the spec relies on (an
// existing control plane, the CA, Prometheus): an error refuses the install unless Force,
// which turns it into a warning.
func (a *Install) checkRelied(ctx context.Context, env *check.Env, res *spec.Resolved, events event.Sink) error {
	if err := withExternal(env, res); err != nil {
		return err
	}
	// Run even when the spec declares nothing: a cacerts Secret istiod would use is checked.
	return a.checkBefore(ctx, env, check.External(), true, events,
		"this install relies on pieces that are not as it needs them")
}

// checkAdmission runs, before anything is written (and so before a prompt), precheck's
// admission checks (operator/admission): a refusal of what the install creates, or a
// ConfigMap or Secret its workloads need and nobody creates, refuses the install unless
// Force. What admitted is not reported: precheck lists it.
func (a *Install) checkAdmission(ctx context.Context, env *check.Env, events event.Sink) error {
	return a.checkBefore(ctx, env, check.Admission(), false, events,
		"the cluster would refuse, or not run, what this install creates")
}

// checkBefore runs checks: an error blocks unless Force, which turns it into a warning;
// lesser problems are warning events, passes (with passes) check events.
func (a *Install) checkBefore(ctx context.Context, env *check.Env, checks []check.Check, passes bool, events event.Sink, headline string) error {
	rep := check.Run(ctx, "install", checks, env)
	var blocking []string
	for _, r := range rep.Results {
		switch {
		case r.Passed:
			if passes && r.Severity != check.Info {
				events.Emit(event.Event{Type: event.Check, Object: r.Object, Message: r.Message})
			}
		case r.Severity == check.Error && !a.Spec.Force:
			blocking = append(blocking, fmt.Sprintf("✘ %s: %s\n    hint: %s", r.Object, r.Message, r.Hint))
		default:
			msg := r.Message
			if r.Severity == check.Error {
				msg += " (ignored because of --force)"
			}
			events.Emit(event.Event{Type: event.Warning, Object: r.Object, Message: msg})
		}
	}
	if len(blocking) > 0 {
		return fmt.Errorf("%s:\n  %s\nNothing was written. Fix them, or install anyway with --force",
			headline, strings.Join(blocking, "\n  "))
	}
	return nil
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

// checkOwnership is the ownership plan of a run: rendered objects that exist and that
// istioctl did not install (a Helm release's, ones made by hand) stop it, named with their
// managers, unless TakeOwnership adopts them (returned, for the run to warn about). It reads
// with the run's metadata lists, which the apply then reuses.
func (a *Install) checkOwnership(ctx context.Context, in *install.Run, manifests []render.Manifest) ([]install.Foreign, error) {
	foreign, err := in.ForeignObjects(ctx, manifests)
	if err != nil || len(foreign) == 0 {
		return nil, err
	}
	if !a.TakeOwnership {
		lines := make([]string, len(foreign))
		for i, f := range foreign {
			lines[i] = fmt.Sprintf("%s (managed by %s)", f.Object, f.Manager)
		}
		return nil, fmt.Errorf("%d object(s) this install would apply exist and were not installed by istioctl:\n  %s\n"+
			"Nothing was written. Leave them to their manager (an existing control plane: declare it in spec.external.controlPlane and disable those components), "+
			"delete them, or adopt them with --take-ownership", len(foreign), strings.Join(lines, "\n  "))
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
