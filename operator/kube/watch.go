package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Watcher keeps watch-fed caches of the objects waits look at: one list and one watch per
// kind, namespace and label selector, shared by every wait of a run, instead of a GET per
// object per poll. Waiters block on Changed and re-judge from the caches.
type Watcher struct {
	client *Client
	ctx    context.Context
	stop   context.CancelFunc

	// metadataOnly watches names, labels and the rest of metadata only (NewMetadataWatcher).
	metadataOnly bool

	mu     sync.Mutex
	caches map[watchKey]*watched
	// entries remembers each kind's cache as asked for, so that a wait judging many
	// objects at every change maps each kind to its resource once.
	entries map[entryKey]entry
	notify  chan struct{}

	// onStall is told of each stalled watch (OnStall); stalls counts them.
	onStall func(Stall)
	stalls  int
	// stallAfter and pingEvery are StallAfter and PingEvery but in tests; ping asks the
	// apiserver for its version (Ping).
	stallAfter, pingEvery time.Duration
	ping                  func(context.Context) error
}

type entryKey struct {
	gvk          schema.GroupVersionKind
	ns, selector string
}

type entry struct {
	wd  *watched
	key watchKey
}

type watchKey struct {
	gvr           schema.GroupVersionResource
	ns, selector  string
	clusterScoped bool
}

type watched struct {
	informer cache.SharedIndexInformer
	key      watchKey
	gvk      schema.GroupVersionKind
	// lister reads the objects the watch holds, for the stall check (stall.go).
	lister   listWatcher
	checking sync.Mutex
	mu       sync.Mutex
	stall    stallState
	// failed holds a watch error that retrying will not fix (forbidden, kind not served).
	failed error
	// lastErr is the newest list/watch error, for the message when a sync never completes.
	lastErr error
}

// NewWatcher starts an empty Watcher; Stop ends its watches.
func (c *Client) NewWatcher() *Watcher {
	// client-go's reflectors log a silent or ended watch through klog, onto the user's
	// terminal (a stall, every 10 s); the stall check says it once, typed (stall.go).
	ctx, stop := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
	w := &Watcher{client: c, ctx: ctx, stop: stop, caches: map[watchKey]*watched{}, entries: map[entryKey]entry{}, notify: make(chan struct{}),
		stallAfter: StallAfter, pingEvery: PingEvery}
	w.ping = func(ctx context.Context) error {
		_, err := c.ServerVersion(ctx)
		return err
	}
	return w
}

// NewMetadataWatcher is NewWatcher for waits that judge objects by their metadata alone
// (whether they exist, their deletion and finalizers): its Get and List return objects with
// apiVersion, kind and metadata only. The apiserver then sends metadata, not bodies: a
// purge's CRDs are 1.6 MB of JSON, and each of the five or so changes a deletion makes to
// one sent it whole, to be encoded by the apiserver and decoded here while both share the
// CPUs the deletion runs on.
func (c *Client) NewMetadataWatcher() *Watcher {
	w := c.NewWatcher()
	w.metadataOnly = true
	return w
}

// Stop ends every watch.
func (w *Watcher) Stop() { w.stop() }

// PingEvery is how often a wait with nothing changing asks whether the apiserver still
// answers (Watcher.Ping).
const PingEvery = time.Second

// Ping asks the apiserver for its version and returns the explained error if it does not
// answer. A wait fed by watches needs it: while the apiserver is down, client-go's
// reflectors retry a refused watch with backoff and report nothing, so the caches just
// stop changing and the wait would last until its deadline.
func (w *Watcher) Ping(ctx context.Context) error {
	return w.ping(ctx)
}

// Changed returns a channel closed at the next change of any watched object. Take it before
// judging the caches, so a change made while judging is not missed.
func (w *Watcher) Changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.notify
}

func (w *Watcher) bump() {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.notify)
	w.notify = make(chan struct{})
}

// Get returns the live version of obj as the watch of its kind and namespace, filtered by
// selector, last saw it (nil when it does not exist or does not match selector). The first
// call for a kind and namespace starts the watch and waits for its initial list.
func (w *Watcher) Get(ctx context.Context, obj *unstructured.Unstructured, selector string) (*unstructured.Unstructured, error) {
	wd, key, err := w.cacheFor(ctx, obj.GroupVersionKind(), obj.GetNamespace(), selector)
	if err != nil {
		return nil, err
	}
	id := obj.GetName()
	if !key.clusterScoped {
		id = key.ns + "/" + id
	}
	item, exists, err := wd.lookup(id)
	if err != nil || !exists {
		return nil, err
	}
	u, ok := item.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("watch of %s returned a %T", key.gvr.Resource, item)
	}
	return u, nil
}

// metadataObject is m as an object of kind gvk with apiVersion, kind and metadata only.
func metadataObject(m *metav1.PartialObjectMetadata, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	md, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&m.ObjectMeta)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": md}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// List returns what the watch of gvk in namespace, filtered by selector, holds.
func (w *Watcher) List(ctx context.Context, gvk schema.GroupVersionKind, namespace, selector string) ([]*unstructured.Unstructured, error) {
	wd, _, err := w.cacheFor(ctx, gvk, namespace, selector)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, item := range wd.items() {
		if u, ok := item.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out, nil
}

// Start starts the watch of gvk in namespace, filtered by selector, and returns without
// waiting for its initial list: a wait that knows which kinds it will judge starts them
// all at once, and its first Get of each waits only for what is left of that list.
func (w *Watcher) Start(gvk schema.GroupVersionKind, namespace, selector string) error {
	_, _, err := w.entry(gvk, namespace, selector)
	return err
}

func (w *Watcher) cacheFor(ctx context.Context, gvk schema.GroupVersionKind, namespace, selector string) (*watched, watchKey, error) {
	wd, key, err := w.entry(gvk, namespace, selector)
	if err != nil {
		return nil, watchKey{}, err
	}
	wd.mu.Lock()
	wd.stall.used = time.Now()
	wd.mu.Unlock()
	if wd.reading() {
		w.check(ctx, wd) // stalled: a read at most pingEvery old answers
	}
	return wd, key, w.synced(ctx, wd, key)
}

// entry is the cache of gvk in namespace filtered by selector, started if it was not.
func (w *Watcher) entry(gvk schema.GroupVersionKind, namespace, selector string) (*watched, watchKey, error) {
	ek := entryKey{gvk: gvk, ns: namespace, selector: selector}
	w.mu.Lock()
	e, ok := w.entries[ek]
	w.mu.Unlock()
	if ok {
		return e.wd, e.key, nil
	}
	_, mapping, err := w.client.Resource(gvk, namespace)
	if err != nil {
		return nil, watchKey{}, err
	}
	key := watchKey{gvr: mapping.Resource, selector: selector}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if namespace == "" {
			namespace = "default"
		}
		key.ns = namespace
	} else {
		key.clusterScoped = true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	wd, ok := w.caches[key]
	if !ok {
		wd = w.start(key, gvk)
		w.caches[key] = wd
	}
	w.entries[ek] = entry{wd: wd, key: key}
	return wd, key, nil
}

func (w *Watcher) start(key watchKey, gvk schema.GroupVersionKind) *watched {
	// The informer dynamicinformer would build, without its package: that imports
	// client-go/informers and with it every typed informer, lister and clientset (about
	// 240 packages to compile, none of them used).
	wd := &watched{key: key, gvk: gvk, stall: stallState{heard: time.Now()}}
	lw, client, example := w.listWatch(wd)
	inf := cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client),
		example, cache.SharedIndexInformerOptions{ObjectDescription: key.gvr.String()})
	wd.informer = inf
	if w.metadataOnly {
		// Stored as the objects Get and List return, converted once as they arrive, without
		// their managed fields (the largest part of metadata, and nothing a wait reads).
		_ = inf.SetTransform(func(o any) (any, error) {
			m, ok := o.(*metav1.PartialObjectMetadata)
			if !ok {
				return o, nil
			}
			m.ManagedFields = nil
			return metadataObject(m, gvk)
		})
	}
	// Our own handler: client-go's default logs through klog, onto the user's terminal.
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		wd.mu.Lock()
		defer wd.mu.Unlock()
		wd.lastErr = err
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err) {
			wd.failed = err
		}
		w.bump()
	})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.bump() },
		UpdateFunc: func(any, any) { w.bump() },
		DeleteFunc: func(any) { w.bump() },
	})
	go inf.RunWithContext(w.ctx)
	return wd
}

// listWatcher lists and watches one resource in one namespace.
type listWatcher interface {
	List(context.Context, metav1.ListOptions) (runtime.Object, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
}

// listWatch lists and watches wd's objects, whole or (metadataOnly) their metadata, each
// watch noted for the stall check; it sets wd's lister and returns the client it uses and
// the type of object it yields, for the informer.
func (w *Watcher) listWatch(wd *watched) (lw *cache.ListWatch, client any, example runtime.Object) {
	key := wd.key
	var ri listWatcher
	if w.metadataOnly {
		ri, client, example = metadataLister{w.client.Metadata.Resource(key.gvr).Namespace(key.ns)}, w.client.Metadata, &metav1.PartialObjectMetadata{}
	} else {
		ri, client, example = dynamicLister{w.client.Dynamic.Resource(key.gvr).Namespace(key.ns)}, w.client.Dynamic, &unstructured.Unstructured{}
	}
	wd.lister = ri
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = key.selector
			return ri.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = key.selector
			in, err := ri.Watch(ctx, o)
			if err != nil {
				return nil, err
			}
			return wd.watching(in), nil
		},
	}, client, example
}

// dynamicLister and metadataLister give both clients' lists one result type.
type dynamicLister struct{ dynamic.ResourceInterface }

func (l dynamicLister) List(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	return l.ResourceInterface.List(ctx, o)
}

type metadataLister struct{ metadata.ResourceInterface }

func (l metadataLister) List(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	return l.ResourceInterface.List(ctx, o)
}

// synced waits for the cache's initial list; an error retrying cannot fix ends the wait.
func (w *Watcher) synced(ctx context.Context, wd *watched, key watchKey) error {
	pinged := time.Now()
	for {
		changed := w.Changed()
		if wd.informer.HasSynced() || wd.reading() {
			return nil // a stalled first list is answered from reads (stall.go)
		}
		wd.mu.Lock()
		failed, last := wd.failed, wd.lastErr
		wd.mu.Unlock()
		if failed != nil {
			return w.client.ExplainError(fmt.Errorf("watching %s: %w", key.gvr.Resource, failed))
		}
		// A first list that never comes is a stall too; the cache is in use all along.
		wd.mu.Lock()
		wd.stall.used = time.Now()
		wd.mu.Unlock()
		w.check(ctx, wd)
		if time.Since(pinged) >= w.pingEvery {
			// The initial list is slow or failing (a refused list is retried quietly): a
			// cluster that no longer answers ends the wait.
			pinged = time.Now()
			if err := w.Ping(ctx); err != nil && ctx.Err() == nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			err := ctx.Err()
			if last != nil {
				err = errors.Join(last, err)
			}
			return w.client.ExplainError(fmt.Errorf("watching %s: %w", key.gvr.Resource, err))
		case <-changed:
		// HasSynced turns true without an event when the initial list is empty.
		case <-time.After(20 * time.Millisecond):
		}
	}
}
