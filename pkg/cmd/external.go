package cmd

import (

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/external"
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
