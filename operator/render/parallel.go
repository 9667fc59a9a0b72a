package render

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// each calls f(0) .. f(n-1) on up to GOMAXPROCS goroutines and returns when all are done.
// A render's parsing and printing are many independent pieces of very unequal size (one
// 100 KB ConfigMap among small objects): handing them out one at a time keeps every CPU
// busy until the last piece.
func each(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}
