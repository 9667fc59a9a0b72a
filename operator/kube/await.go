package kube

import (
	"context"
	"time"
)

// Await is the one way a wait fed by the watcher's caches waits: look judges the caches
// now; Await calls it at once, then again at every change of a watched object, until it
// says done or fails. When nothing changes for PingEvery it asks whether the apiserver
// still answers, so that a cluster gone away ends the wait at once rather than at its
// deadline (the reflectors retry quietly and the caches just stop changing), and looks
// again. Between looks it looks after the watches (watchdog: a silent watch that missed
// changes is named and read instead, stall.go), so a stalled watch never hides a ready
// object. When ctx ends first it returns ctx's error: the caller says what it waited for.
func (w *Watcher) Await(ctx context.Context, look func() (done bool, err error)) error {
	for {
		changed := w.Changed() // before looking: a change made meanwhile is not missed
		if done, err := look(); done || err != nil {
			return err
		}
		ping := time.NewTimer(w.pingEvery)
		select {
		case <-ctx.Done():
			ping.Stop()
			return ctx.Err()
		case <-changed:
			ping.Stop()
		case <-ping.C:
			if err := w.Ping(ctx); err != nil && ctx.Err() == nil {
				return err
			}
		}
		w.watchdog(ctx)
	}
}
