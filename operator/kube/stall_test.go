package kube

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	ktesting "k8s.io/client-go/testing"
)

var (
	cmGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

func configMap(rv, ready string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"ready": ready}}}
	u.SetGroupVersionKind(cmGVK)
	u.SetNamespace("istio-system")
	u.SetName("cm")
	u.SetResourceVersion(rv)
	return u
}

// stallBed is a fake cluster holding one ConfigMap, not ready, whose watches are either
// live (the fake's own) or silent: they open and never deliver, as behind a proxy that
// holds watch streams; reads answer. It counts the watches opened.
type stallBed struct {
	dc      *dynamicfake.FakeDynamicClient
	w       *Watcher
	watches atomic.Int32
	mu      sync.Mutex
	stalls  []Stall
}

func newStallBed(t *testing.T, silent bool) *stallBed {
	t.Helper()
	b := &stallBed{dc: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{cmGVR: "ConfigMapList"}, configMap("1", "no"))}
	b.dc.PrependWatchReactor("configmaps", func(ktesting.Action) (bool, watch.Interface, error) {
		b.watches.Add(1)
		if silent {
			return true, watch.NewFake(), nil
		}
		return false, nil, nil
	})
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(cmGVK, meta.RESTScopeNamespace)
	b.w = (&Client{Dynamic: b.dc, Mapper: mapper}).NewWatcher()
	b.w.stallAfter, b.w.pingEvery = 300*time.Millisecond, 50*time.Millisecond
	b.w.ping = func(context.Context) error { return nil }
	b.w.OnStall(func(s Stall) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.stalls = append(b.stalls, s)
	})
	t.Cleanup(b.w.Stop)
	return b
}

// ready marks the ConfigMap ready at resourceVersion rv, as the apiserver would store it.
func (b *stallBed) ready(t *testing.T, rv string) {
	t.Helper()
	if err := b.dc.Tracker().Update(cmGVR, configMap(rv, "yes"), "istio-system"); err != nil {
		t.Fatal(err)
	}
}

// await waits up to limit for the ConfigMap to be ready, by Get, as install's wait does.
func (b *stallBed) await(limit time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	err := b.w.Await(ctx, func() (bool, error) {
		live, err := b.w.Get(ctx, configMap("", ""), "")
		if err != nil || live == nil {
			return false, err
		}
		v, _, _ := unstructured.NestedString(live.Object, "data", "ready")
		return v == "yes", nil
	})
	return time.Since(start), err
}

func (b *stallBed) named() []Stall {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Stall(nil), b.stalls...)
}

// TestStalledWatch: a watch that never delivers while reads show the object changed is
// named once (which watch, since when, what it missed), re-established, and the wait judges
// from reads meanwhile: it sees the object ready within the stall interval and a few polls.
func TestStalledWatch(t *testing.T) {
	b := newStallBed(t, true)
	start := time.Now()
	go func() {
		time.Sleep(100 * time.Millisecond)
		b.ready(t, "2")
	}()
	took, err := b.await(5 * time.Second)
	if err != nil {
		t.Fatalf("the wait did not see the object ready by reads: %v", err)
	}
	if limit := b.w.stallAfter + 10*b.w.pingEvery; took > limit {
		t.Errorf("the wait took %v, want at most %v (the stall interval and a few polls)", took, limit)
	}
	stalls := b.named()
	if len(stalls) != 1 {
		t.Fatalf("stalls named: %+v, want 1", stalls)
	}
	s := stalls[0]
	if s.Resource != "configmaps" || s.Namespace != "istio-system" || len(s.Missed) != 1 || s.Missed[0] != "istio-system/cm" || s.FirstList ||
		s.LastHeard.Before(start) || s.LastHeard.After(start.Add(b.w.stallAfter)) {
		t.Errorf("stall %+v; want configmaps in istio-system, missed istio-system/cm, last heard at the watch's start", s)
	}
	if got := s.Watch(); got != "configmaps in istio-system" {
		t.Errorf("Watch() = %q", got)
	}
	// The informer watches again after its backoff (the test's stream lasted under a second).
	for end := time.Now().Add(5 * time.Second); b.watches.Load() < 2 && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	if n := b.watches.Load(); n < 2 {
		t.Errorf("%d watches opened; want the stalled one stopped and opened again", n)
	}
	// Still silent: the wait goes on by reads, without naming the stall again.
	b.ready(t, "3")
	time.Sleep(3 * b.w.pingEvery)
	if _, err := b.await(time.Second); err != nil {
		t.Fatal(err)
	}
	if live, _ := b.w.Get(context.Background(), configMap("", ""), ""); live == nil || live.GetResourceVersion() != "3" {
		t.Errorf("Get while stalled = %v; want the newest read (resourceVersion 3)", live)
	}
	if n := len(b.named()); n != 1 {
		t.Errorf("the stall was named %d times, want once", n)
	}
}

// TestQuietWatchIsNoStall: a live watch that is quiet because nothing changes is read
// once per stall interval and never named; a change it delivers ends the wait at once.
func TestQuietWatchIsNoStall(t *testing.T) {
	b := newStallBed(t, false)
	go func() {
		time.Sleep(3 * b.w.stallAfter)
		b.ready(t, "2")
	}()
	if _, err := b.await(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if s := b.named(); len(s) != 0 {
		t.Errorf("a quiet live watch was named stalled: %+v", s)
	}
	if n := b.watches.Load(); n != 1 {
		t.Errorf("%d watches opened, want 1 (never re-established)", n)
	}
}
