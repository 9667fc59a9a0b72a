package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/external"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

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

// checkRelied runs, before the prompt and before anything is written, the checks of what
// the spec relies on (an existing control plane, the CA, Prometheus): an error refuses the
// install unless --force, which prints it as a warning.
func (a *InstallAction) checkRelied(ctx context.Context, client *kube.Client, res *spec.Resolved, manifests []render.Manifest, events event.Sink) error {
	env := &check.Env{Client: client, IstioNamespace: ownerOf(res).Namespace, Revision: res.IOP.Spec.Revision, Manifests: manifests}
	if err := withExternal(env, res); err != nil {
		return err
	}
	// Run even when the spec declares nothing: a cacerts Secret istiod would use is checked.
	rep := check.Run(ctx, "install", check.External(), env)
	var blocking []string
	for _, r := range rep.Results {
		switch {
		case r.Passed:
			if a.Output == "text" && r.Severity != check.Info {
				fmt.Fprintf(a.Out, "✔ %s: %s\n", r.Object, r.Message)
			}
		case r.Severity == check.Error && !a.Spec.Force:
			blocking = append(blocking, fmt.Sprintf("✘ %s: %s\n    hint: %s", r.Object, r.Message, r.Hint))
		default:
			msg := r.Message
			if r.Severity == check.Error {
				msg += " (ignored because of --force)"
			}
			events.Emit(event.Event{Time: time.Now(), Type: event.Warning, Object: r.Object, Message: msg})
		}
	}
	if len(blocking) > 0 {
		return fmt.Errorf("this install relies on pieces that are not as it needs them:\n  %s\nNothing was written. Fix them, or install anyway with --force",
			strings.Join(blocking, "\n  "))
	}
	return nil
}

// checkOwnership is the ownership plan of a run, before anything is written: rendered
// objects that exist and that istioctl did not install (a Helm release's, ones made by hand)
// stop it, named with their managers, unless --take-ownership adopts them. It reads with
// the installer's metadata lists, which the apply then reuses.
func (p *applier) checkOwnership(ctx context.Context, in *install.Installer, manifests []render.Manifest) error {
	foreign, err := in.ForeignObjects(ctx, manifests)
	if err != nil {
		return err
	}
	if len(foreign) == 0 {
		return nil
	}
	if !p.flags.TakeOwnership {
		lines := make([]string, len(foreign))
		for i, f := range foreign {
			lines[i] = fmt.Sprintf("%s (managed by %s)", f.Object, f.Manager)
		}
		return fmt.Errorf("%d object(s) this install would apply exist and were not installed by istioctl:\n  %s\n"+
			"Nothing was written. Leave them to their manager (an existing control plane: declare it in spec.external.controlPlane and disable those components), "+
			"delete them, or adopt them with --take-ownership", len(foreign), strings.Join(lines, "\n  "))
	}
	for _, f := range foreign {
		msg := "adopted from " + f.Manager + ": this install now owns it (re-applies, prunes and uninstalls it)"
		if f.Helm {
			msg += "; the Helm release still lists it, so helm uninstall would delete it"
		}
		p.events.Emit(event.Event{Time: time.Now(), Type: event.Warning, Object: f.Object, Message: msg})
	}
	return nil
}

// printRelied says, before an uninstall, what it leaves alone because the spec relies on it.
func printRelied(w io.Writer, owner install.Owner) {
	if len(owner.Leave) == 0 {
		return
	}
	names := make([]string, len(owner.Leave))
	for i, c := range owner.Leave {
		names[i] = string(c)
	}
	fmt.Fprintf(w, "Leaving %s alone, and the revision's tags and install records: this spec relies on them and does not install them.\n", strings.Join(names, ", "))
}
