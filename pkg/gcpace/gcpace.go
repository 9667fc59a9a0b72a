// Package gcpace spaces a command's garbage collections by at least a fixed amount of
// allocation, on top of Go's default pacing (GOGC=100: collect when the heap has doubled).
//
// A short command starts with a small live heap, the leftovers of package initialisation
// (about 2 MB), so by default it collects every 2-4 MB it allocates: `manifest generate`
// allocates about 5 MB and collected three times, each collection marking the same live heap
// and scanning the binary's globals and the render's deep template stacks, for 35% of the
// render's CPU time and 45% of its wall time (hack/bench-render.sh). With at least Headroom
// between collections it collects none. A command whose live heap exceeds Headroom is paced
// exactly as by GOGC=100, so a large install or precheck keeps the memory it had. Below
// that, the heap may grow to Headroom above the live heap where GOGC=100 stops at twice it
// (and at least 4 MB): at most 10 MB more, with 2 MB live, and less the more is live.
//
// Go has no minimum-heap setting (GOMEMLIMIT only ever makes collections sooner), so after
// every collection Start's finaliser sets the GC percentage that puts the next one Headroom
// above the live heap. A GOGC in the environment is left to the runtime as set.
package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// Headroom is the least a command allocates between two collections.
const Headroom = 12 << 20

// Start paces collections from now on. Call it once, from main: package initialisation's
// garbage is collected as usual, before it.
func Start() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	pace()
}

// pace sets the percentage for the live heap the last collection left, and again after
// the next collection: sentinel becomes garbage at once, so the next cycle finds it and
// the runtime runs its finaliser.
func pace() {
	debug.SetGCPercent(Percent(liveHeap()))
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) { pace() })
}

// sentinel is big enough not to be a tiny allocation (a tiny object's finaliser may never
// run: it shares its block with others).
type sentinel struct{ _ [16]byte }

// Percent is the GC percentage that sets the next collection at least Headroom above a
// live heap of live bytes, and never sooner than GOGC=100 would.
func Percent(live uint64) int {
	if live == 0 || live >= Headroom {
		return 100
	}
	return int((Headroom*100 + live - 1) / live)
}

// liveHeap is the heap the last collection marked live (0 before the first one).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
