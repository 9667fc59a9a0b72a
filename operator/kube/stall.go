package kube

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// StallAfter is how long a watch a wait judges from may deliver nothing (no event, no
// bookmark) before the wait reads its objects once to see whether it missed something. A
// healthy watch delivers a change within milliseconds, and the objects a wait is on change
// every few seconds while they start; but a quiet watch is normal (bookmarks come about once
// a minute), and each look costs a LIST. 10 s costs a quiet watch one small LIST per 10 s,
// and names a stall within about 11 s: twelve times before a 2-minute readiness timeout.
const StallAfter = 10 * time.Second

// Stall is a watch found silent while a read of its objects showed changes it never
// delivered: something between istioctl and the apiserver (a proxy, a load balancer) holds
// watch streams open and silent while plain requests pass.
type Stall struct {
	// Resource (plural.group), Namespace ("" when cluster-scoped) and Selector name the watch.
	Resource, Namespace, Selector string
	// LastHeard is when it last delivered an event or a bookmark, or was started.
	LastHeard time.Time
	// Missed are the objects (namespace/name) the read showed created, changed or deleted
	// that the watch did not deliver; when FirstList, the watch never delivered its first
	// list, and Missed are every object read.
	Missed    []string
	FirstList bool
}

// Watch names the watch for people: "deployments.apps in istio-system (labels ...)".
func (s Stall) Watch() string {
	out := s.Resource
	if s.Namespace != "" {
		out += " in " + s.Namespace
	}
	if s.Selector != "" {
		out += " (labels " + s.Selector + ")"
	}
	return out
}

// Advice words the stall for people: what the read showed, that the wait goes on by reads
// (so the run does not fail for it), and what to check.
func (s Stall) Advice() string {
	seen := fmt.Sprintf("reads answer and show %d change(s) it never delivered", len(s.Missed))
	if s.FirstList {
		seen = fmt.Sprintf("it never delivered its first list, yet reads answer (%d object(s))", len(s.Missed))
	}
	return seen + fmt.Sprintf("; the wait goes on by reading them every %s and the watch is re-established. ", PingEvery) +
		"Check for a proxy or load balancer between istioctl and the apiserver that buffers watch responses or idles out long-lived streams"
}

// OnStall has f called, once per watch, when a watch is found stalled (Stall). Set it before
// the first Get, List or Start.
func (w *Watcher) OnStall(f func(Stall)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onStall = f
}

// stallState is a cache's watchdog state, under watched.mu.
type stallState struct {
	// heard is when its watch last delivered anything (or the cache started); used when a
	// wait last read the cache: only caches a wait reads are looked after.
	heard, used time.Time
	// stream is the watch in flight, stopped to re-establish it on a stall.
	stream watch.Interface
	// read, while the watch is stalled, holds the newest read of the objects, keyed as the
	// informer's store: Get and List answer from it until the watch delivers again.
	read map[string]*unstructured.Unstructured
	// readAt is when the last read was sent; suspect, when a read found changes the watch had
	// not delivered: a stall once nothing is delivered for pingEvery after it (an event in
	// flight arrives within that).
	readAt, suspect time.Time
	named           bool
}

// heardWatch passes a watch's events on to the informer and notes each delivery, bookmarks
// included (which the informer's handlers never see).
type heardWatch struct {
	in    watch.Interface
	out   chan watch.Event
	done  chan struct{}
	once  sync.Once
	heard func()
}

func newHeardWatch(in watch.Interface, heard func()) *heardWatch {
	h := &heardWatch{in: in, out: make(chan watch.Event), done: make(chan struct{}), heard: heard}
	go h.loop()
	return h
}

func (h *heardWatch) loop() {
	defer close(h.out)
	for {
		select {
		case e, ok := <-h.in.ResultChan():
			if !ok {
				return
			}
			h.heard()
			select {
			case h.out <- e:
			case <-h.done:
				return
			}
		case <-h.done:
			return
		}
	}
}

func (h *heardWatch) ResultChan() <-chan watch.Event { return h.out }

func (h *heardWatch) Stop() {
	h.once.Do(func() {
		close(h.done)
		h.in.Stop()
	})
}

// watching wraps a new watch of wd so that its deliveries are noted, and keeps it to stop.
func (wd *watched) watching(in watch.Interface) watch.Interface {
	h := newHeardWatch(in, wd.delivered)
	wd.mu.Lock()
	defer wd.mu.Unlock()
	wd.stall.stream = h
	return h
}

// delivered notes a delivery: the watch works, so the cache answers again, not the read.
func (wd *watched) delivered() {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	wd.stall.heard = time.Now()
	wd.stall.read = nil
}

// lookup returns the object under key: from the last read while the watch is stalled, else
// from the informer's store.
func (wd *watched) lookup(key string) (any, bool, error) {
	wd.mu.Lock()
	read := wd.stall.read
	wd.mu.Unlock()
	if read != nil {
		o, ok := read[key]
		return o, ok, nil
	}
	return wd.informer.GetStore().GetByKey(key)
}

// items returns every object: the last read's while the watch is stalled, else the store's.
func (wd *watched) items() []any {
	wd.mu.Lock()
	read := wd.stall.read
	wd.mu.Unlock()
	if read == nil {
		return wd.informer.GetStore().List()
	}
	out := make([]any, 0, len(read))
	for _, o := range read {
		out = append(out, o)
	}
	return out
}

// reading says whether Get and List answer from reads (the watch is stalled).
func (wd *watched) reading() bool {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	return wd.stall.read != nil
}

// watchdog looks after every cache a wait reads: see check.
func (w *Watcher) watchdog(ctx context.Context) {
	w.mu.Lock()
	caches := make([]*watched, 0, len(w.caches))
	for _, wd := range w.caches {
		caches = append(caches, wd)
	}
	w.mu.Unlock()
	for _, wd := range caches {
		w.check(ctx, wd)
	}
}

// check is the one stall rule. A cache a wait reads whose watch delivered nothing for
// stallAfter (pingEvery once a watch of this Watcher stalled: they go the same way) is read
// once; a read showing what the watch never delivered (an object created, changed or
// deleted; anything at all before its first list came) makes it a suspect, and a suspect
// whose watch still delivers nothing for pingEvery is stalled: it is named (OnStall), its
// watch is stopped (the informer watches again, from the newest version it holds, so it
// loses nothing), and Get and List answer from a read every pingEvery until the watch
// delivers again. Concurrent waits share the work: one checks, the others go on.
func (w *Watcher) check(ctx context.Context, wd *watched) {
	if !wd.checking.TryLock() {
		return
	}
	defer wd.checking.Unlock()
	now := time.Now()
	wd.mu.Lock()
	s := wd.stall
	wd.mu.Unlock()
	if now.Sub(s.used) > w.stallAfter {
		return // no wait reads it
	}
	switch {
	case s.read != nil:
		if now.Sub(s.readAt) >= w.pingEvery {
			w.refresh(ctx, wd)
		}
	case !s.suspect.IsZero():
		switch {
		case s.heard.After(s.suspect):
			wd.mu.Lock()
			wd.stall.suspect = time.Time{}
			wd.mu.Unlock()
		case now.Sub(s.suspect) >= w.pingEvery:
			w.stalled(ctx, wd)
		}
	default:
		quiet := w.stallAfter
		if w.anyStalled() {
			quiet = w.pingEvery
		}
		if now.Sub(s.heard) < quiet || now.Sub(s.readAt) < quiet {
			return
		}
		read, at, err := w.read(ctx, wd)
		wd.mu.Lock()
		defer wd.mu.Unlock()
		wd.stall.readAt = at
		if _, differs := missed(wd, read); err == nil && differs && !wd.stall.heard.After(at) {
			wd.stall.suspect = at
		}
	}
}

// stalled names wd's stall (once), stops its watch and starts answering from reads.
func (w *Watcher) stalled(ctx context.Context, wd *watched) {
	read, at, err := w.read(ctx, wd)
	if err != nil {
		return // the next check reads again; a cluster gone away is Ping's
	}
	wd.mu.Lock()
	first := !wd.stall.named
	keys, _ := missed(wd, read)
	st := Stall{Resource: wd.key.gvr.GroupResource().String(), Namespace: wd.key.ns, Selector: wd.key.selector,
		LastHeard: wd.stall.heard, Missed: keys, FirstList: !wd.informer.HasSynced()}
	wd.stall.named, wd.stall.suspect, wd.stall.read, wd.stall.readAt = true, time.Time{}, read, at
	stream := wd.stall.stream
	wd.mu.Unlock()
	w.mu.Lock()
	w.stalls++
	onStall := w.onStall
	w.mu.Unlock()
	if first && onStall != nil {
		onStall(st)
	}
	if stream != nil {
		stream.Stop()
	}
	w.bump()
}

// refresh reads a stalled cache's objects again; a change wakes the waits.
func (w *Watcher) refresh(ctx context.Context, wd *watched) {
	read, at, err := w.read(ctx, wd)
	wd.mu.Lock()
	if err != nil || wd.stall.read == nil { // delivered meanwhile: the store answers
		wd.stall.readAt = at
		wd.mu.Unlock()
		return
	}
	changed := !sameVersions(wd.stall.read, read)
	wd.stall.read, wd.stall.readAt = read, at
	wd.mu.Unlock()
	if changed {
		w.bump()
	}
}

func (w *Watcher) anyStalled() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stalls > 0
}

// read lists wd's objects as its watch would hold them, keyed as the store; at is when the
// read was sent.
func (w *Watcher) read(ctx context.Context, wd *watched) (map[string]*unstructured.Unstructured, time.Time, error) {
	at := time.Now()
	list, err := wd.lister.List(ctx, metav1.ListOptions{LabelSelector: wd.key.selector})
	if err != nil {
		return nil, at, err
	}
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, at, err
	}
	out := make(map[string]*unstructured.Unstructured, len(objs))
	for _, o := range objs {
		var u *unstructured.Unstructured
		switch x := o.(type) {
		case *unstructured.Unstructured:
			u = x
		case *metav1.PartialObjectMetadata:
			x.ManagedFields = nil
			if u, err = metadataObject(x, wd.gvk); err != nil {
				return nil, at, err
			}
		default:
			return nil, at, fmt.Errorf("listing %s returned a %T", wd.key.gvr.Resource, o)
		}
		key, err := cache.MetaNamespaceKeyFunc(u)
		if err != nil {
			return nil, at, err
		}
		out[key] = u
	}
	return out, at, nil
}

// missed are the keys of the objects read whose version the cache does not hold (created
// or changed since), and of those it holds that the read lacks (deleted); before the
// watch's first list, every object read, and the read differs even when it is empty: the
// watch delivered nothing at all. Call with wd.mu held.
func missed(wd *watched, read map[string]*unstructured.Unstructured) (keys []string, differs bool) {
	var out []string
	if !wd.informer.HasSynced() {
		for key := range read {
			out = append(out, key)
		}
		sort.Strings(out)
		return out, true
	}
	held := map[string]string{}
	for _, item := range wd.informer.GetStore().List() {
		if m, err := meta.Accessor(item); err == nil {
			key, _ := cache.MetaNamespaceKeyFunc(item)
			held[key] = m.GetResourceVersion()
		}
	}
	for key, o := range read {
		if rv, ok := held[key]; !ok || rv != o.GetResourceVersion() {
			out = append(out, key)
		}
	}
	for key := range held {
		if _, ok := read[key]; !ok {
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out, len(out) > 0
}

// sameVersions says whether two reads hold the same objects at the same versions.
func sameVersions(a, b map[string]*unstructured.Unstructured) bool {
	if len(a) != len(b) {
		return false
	}
	for key, o := range a {
		if p, ok := b[key]; !ok || p.GetResourceVersion() != o.GetResourceVersion() {
			return false
		}
	}
	return true
}
