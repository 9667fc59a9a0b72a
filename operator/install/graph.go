package install

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/schedule"
)

// Needs are what each manifest's component waits for, in the order of manifests: its
// parents, and in an upgrade (upgrade) what component.UpgradeAfter names, each only when the
// run installs it (a disabled component releases its dependents at once).
func Needs(manifests []render.Manifest, upgrade bool) [][]string {
	present := map[component.Name]bool{}
	for _, m := range manifests {
		present[m.Instance.Name] = true
	}
	out := make([][]string, len(manifests))
	for i, m := range manifests {
		deps := m.Instance.Parents
		if upgrade {
			deps = append(append([]component.Name(nil), deps...), m.Instance.UpgradeAfter...)
		}
		for _, p := range deps {
			if present[p] && !slices.Contains(out[i], string(p)) {
				out[i] = append(out[i], string(p))
			}
		}
	}
	return out
}

// runGraph runs fn for every manifest on the one scheduler, each once all instances of its
// component's parents (component.All) have finished without error; a manifest whose parent
// failed, or that ctx stopped while it waited, is not run: skip says why. Manifests whose
// parents are done run at the same time. Each component ends its hook in hooks (its name)
// once all its instances are done: what a run beside this one may wait on. It returns when
// every manifest has run or been skipped. skip's outer is the need that failed when it is
// not a component of this run but a hook of a run beside it (schedule.Hooks.After): no
// failure of this run's own says why then.
// An upgrade adds the edges of component.UpgradeAfter (the skew rule upgrade-order).
func runGraph(ctx context.Context, hooks *schedule.Hooks, manifests []render.Manifest, upgrade bool, fn func(render.Manifest) error, skip func(m render.Manifest, why string, outer error)) {
	needs := Needs(manifests, upgrade)
	nodes := make([]schedule.Node, len(manifests))
	own := map[string]bool{}
	for _, m := range manifests {
		own[string(m.Instance.Name)] = true
	}
	for i, m := range manifests {
		nodes[i] = schedule.Node{Name: string(m.Instance.Name), Needs: needs[i], Run: func(context.Context) error { return fn(m) }}
	}
	hooks.Run(ctx, nodes, func(i int, err error) {
		m := manifests[i]
		var need *schedule.NeedError
		var stop *schedule.StoppedError
		switch {
		case errors.As(err, &stop):
			skip(m, fmt.Sprintf("%s while waiting for %s", stopped(ctx), stop.Need), nil)
		case errors.As(err, &need) && own[need.Need]:
			skip(m, fmt.Sprintf("%s failed", need.Need), nil)
		case errors.As(err, &need):
			skip(m, fmt.Sprintf("%s failed", need.Need), need)
		default:
			skip(m, err.Error(), nil)
		}
	})
}
