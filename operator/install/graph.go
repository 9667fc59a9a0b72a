package install

import (
	"context"
	"errors"
	"fmt"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/schedule"
)

// runGraph runs fn for every manifest on the one scheduler, each once all instances of its
// component's parents (component.All) have finished without error; a manifest whose parent
// failed, or that ctx stopped while it waited, is not run: skip says why. Manifests whose
// parents are done run at the same time. Each component ends its hook in hooks (its name)
// once all its instances are done: what a run beside this one may wait on. It returns when
// every manifest has run or been skipped.
func runGraph(ctx context.Context, hooks *schedule.Hooks, manifests []render.Manifest, fn func(render.Manifest) error, skip func(m render.Manifest, why string)) {
	present := map[component.Name]bool{}
	for _, m := range manifests {
		present[m.Instance.Name] = true
	}
	nodes := make([]schedule.Node, len(manifests))
	for i, m := range manifests {
		var needs []string
		for _, p := range m.Instance.Parents {
			if present[p] { // a disabled component releases its dependents at once
				needs = append(needs, string(p))
			}
		}
		nodes[i] = schedule.Node{Name: string(m.Instance.Name), Needs: needs, Run: func(context.Context) error { return fn(m) }}
	}
	hooks.Run(ctx, nodes, func(i int, err error) {
		m := manifests[i]
		var need *schedule.NeedError
		var stop *schedule.StoppedError
		switch {
		case errors.As(err, &stop):
			skip(m, fmt.Sprintf("%s while waiting for %s", stopped(ctx), stop.Need))
		case errors.As(err, &need):
			skip(m, fmt.Sprintf("%s failed", need.Need))
		default:
			skip(m, err.Error())
		}
	})
}
