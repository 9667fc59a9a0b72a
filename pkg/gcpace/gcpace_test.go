package gcpace

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// gcPercent reads the current GC percentage.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},              // before the first collection: the default
		{2 << 20, 600},        // 2 MiB live: the next collection 12 MiB above it
		{3 << 20, 400},        //
		{5 << 20, 240},        //
		{Headroom/2 + 1, 200}, // rounded up: never less than Headroom above
		{Headroom - 1, 101},   //
		{Headroom, 100},       // from Headroom up, GOGC=100's doubling is more than Headroom
		{Headroom * 10, 100},  //
		{1, Headroom * 100},   //
	} {
		got := Percent(c.live)
		if got != c.want {
			t.Errorf("Percent(%d) = %d, want %d", c.live, got, c.want)
		}
		if c.live > 0 && c.live+c.live*uint64(got)/100 < c.live+Headroom && c.live < Headroom {
			t.Errorf("Percent(%d) = %d puts the next collection less than Headroom above", c.live, got)
		}
	}
}

// Runs first: before any Start has set a finaliser going in this process.
func TestStartLeavesGOGC(t *testing.T) {
	t.Setenv("GOGC", "77")
	old := debug.SetGCPercent(77)
	defer debug.SetGCPercent(old)
	Start()
	runtime.GC()
	if p := gcPercent(); p != 77 {
		t.Fatalf("GC percent %d after Start with GOGC=77 in the environment", p)
	}
}

var sink [][]byte

// A small live heap: allocating less than Headroom collects nothing (GOGC=100 alone would
// collect several times), and the percentage is set again after a collection.
func TestStartSpacesCollections(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	runtime.GC()
	Start()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range (Headroom / 2) / (64 << 10) {
		sink = append(sink, make([]byte, 64<<10))
		sink = sink[len(sink)-1:]
	}
	runtime.ReadMemStats(&after)
	if n := after.NumGC - before.NumGC; n != 0 {
		t.Fatalf("%d collections while allocating %d MiB with %d MiB live", n, Headroom/2>>20, before.HeapAlloc>>20)
	}
	// Once the live heap grows past Headroom, pacing is GOGC=100's again.
	big := make([][]byte, 0, 3*Headroom/(1<<20))
	for range cap(big) {
		big = append(big, make([]byte, 1<<20))
	}
	runtime.GC()
	deadline := time.Now().Add(10 * time.Second)
	for gcPercent() != 100 {
		if time.Now().After(deadline) {
			t.Fatalf("GC percent %d with %d MiB live, want 100", gcPercent(), 3*Headroom>>20)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(big)
	// And back up once the heap is small again.
	big = nil
	runtime.GC()
	for gcPercent() <= 100 {
		if time.Now().After(deadline) {
			t.Fatalf("GC percent %d after the heap shrank", gcPercent())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
