package install

import (
	"context"
	"fmt"
	"sync"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/render"
)

// runGraph runs fn for every manifest, each once all instances of its component's parents
// (component.All) have finished without error; a manifest whose parent failed, or that ctx
// stopped while it waited, is not run: skip says why. Manifests whose parents are done run
// at the same time. It returns when every manifest has run or been skipped.
func runGraph(ctx context.Context, manifests []render.Manifest, fn func(render.Manifest) error, skip func(m render.Manifest, why string)) {
	var mu sync.Mutex
	// done[c] closes when every instance of component c is finished; failed[c] says one failed.
	done := map[component.Name]chan struct{}{}
	failed := map[component.Name]bool{}
	remaining := map[component.Name]int{}
	for _, m := range manifests {
		remaining[m.Instance.Name]++
	}
	for _, c := range component.All {
		done[c.Name] = make(chan struct{})
		if remaining[c.Name] == 0 {
			close(done[c.Name]) // disabled components release their dependents at once
		}
	}
	finish := func(c component.Name, ok bool) {
		mu.Lock()
		defer mu.Unlock()
		if !ok {
			failed[c] = true
		}
		if remaining[c]--; remaining[c] == 0 {
			close(done[c])
		}
	}
	var wg sync.WaitGroup
	for _, m := range manifests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range m.Instance.Parents {
				select {
				case <-done[p]:
				case <-ctx.Done():
					skip(m, fmt.Sprintf("%s while waiting for %s", stopped(ctx), p))
					finish(m.Instance.Name, false)
					return
				}
				mu.Lock()
				parentFailed := failed[p]
				mu.Unlock()
				if parentFailed {
					skip(m, fmt.Sprintf("%s failed", p))
					finish(m.Instance.Name, false)
					return
				}
			}
			finish(m.Instance.Name, fn(m) == nil)
		}()
	}
	wg.Wait()
}
