package schedule

import (
	"context"
	"strings"
	"sync"
)

// Hooks are one run's readiness hooks by name: each ends once, standing or failed, and
// nodes wait on them. A hook named "a/b" is within "a": when "a" ends, every hook within it
// still open ends the same way (a cluster's install that ends before its Pilot was ready
// ends the hook "cluster/Pilot" with it). Safe for concurrent use.
type Hooks struct {
	// scope prefixes the names this view ends and waits on ("" or "name/").
	scope string
	all   *hookSet
	// outer are hooks named from the root that every node of this view not in except also
	// waits on (After).
	outer  []string
	except map[string]bool
}

type hookSet struct {
	mu    sync.Mutex
	hooks map[string]*hook
}

type hook struct {
	done chan struct{}
	err  error
}

// New is an empty set of hooks.
func New() *Hooks { return &Hooks{all: &hookSet{hooks: map[string]*hook{}}} }

// Scope is the view of h whose names are within name: Scope("cluster-1").End("Pilot", nil)
// ends the hook "cluster-1/Pilot". A run inside a node (a cluster's install) gets its
// node's scope, so what it reports is the node's.
func (h *Hooks) Scope(name string) *Hooks { return &Hooks{scope: h.scope + name + "/", all: h.all} }

// After is the view of h whose nodes, but those named in except, also wait on the hooks
// needs, named from the root whatever h's scope: a fleet's remote starts its Base at once
// and the rest of its install once its primary's Pilot stands ("cluster-1/Pilot").
func (h *Hooks) After(needs []string, except ...string) *Hooks {
	out := *h
	out.outer = append(append([]string(nil), h.outer...), needs...)
	out.except = map[string]bool{}
	for k := range h.except {
		out.except[k] = true
	}
	for _, n := range except {
		out.except[n] = true
	}
	return &out
}

// outerNeeds are the root-named hooks a node of this view named name waits on first.
func (h *Hooks) outerNeeds(name string) []string {
	if h.except[name] {
		return nil
	}
	return h.outer
}

func (s *hookSet) get(name string) *hook {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.getLocked(name)
}

// getLocked is the named hook, made when new: ended already when a hook it is within has
// ended (a wait that comes after its node).
func (s *hookSet) getLocked(name string) *hook {
	k, ok := s.hooks[name]
	if ok {
		return k
	}
	k = &hook{done: make(chan struct{})}
	s.hooks[name] = k
	for i := strings.LastIndexByte(name, '/'); i > 0; i = strings.LastIndexByte(name[:i], '/') {
		if outer, ok := s.hooks[name[:i]]; ok && isDone(outer) {
			k.err = outer.err
			close(k.done)
			break
		}
	}
	return k
}

func isDone(k *hook) bool {
	select {
	case <-k.done:
		return true
	default:
		return false
	}
}

// End ends the named hook: standing (err nil) or failed. A hook already ended keeps its
// end. Every open hook within it ends the same way.
func (h *Hooks) End(name string, err error) {
	full := h.scope + name
	s := h.all
	s.mu.Lock()
	defer s.mu.Unlock()
	end := func(k *hook) {
		if !isDone(k) {
			k.err = err
			close(k.done)
		}
	}
	end(s.getLocked(full))
	for n, k := range s.hooks {
		if strings.HasPrefix(n, full+"/") {
			end(k)
		}
	}
}

// NeedError is a need that did not stand: the hook (named as the node asked for it) and
// why it failed.
type NeedError struct {
	Need string
	Err  error
}

func (e *NeedError) Error() string { return e.Need + " did not stand: " + e.Err.Error() }

func (e *NeedError) Unwrap() error { return e.Err }

// StoppedError is a wait ctx ended: the hook it was waiting on and ctx's error.
type StoppedError struct {
	Need string
	Err  error
}

func (e *StoppedError) Error() string { return e.Err.Error() + " while waiting for " + e.Need }

func (e *StoppedError) Unwrap() error { return e.Err }

// Wait waits for the named hooks in turn: nil once all stand, a *NeedError for the first
// that failed, a *StoppedError when ctx ends first.
func (h *Hooks) Wait(ctx context.Context, names ...string) error {
	return h.wait(ctx, h.scope, names)
}

// wait waits for the hooks names, each prefixed with scope.
func (h *Hooks) wait(ctx context.Context, scope string, names []string) error {
	for _, n := range names {
		k := h.all.get(scope + n)
		select {
		case <-k.done:
		case <-ctx.Done():
			return &StoppedError{Need: n, Err: ctx.Err()}
		}
		if k.err != nil {
			return &NeedError{Need: n, Err: k.err}
		}
	}
	return nil
}

// Node is a step of a graph.
type Node struct {
	// Name is the hook the node ends with its result. Several nodes may share one: it
	// stands once all of them have run without error, and fails with the first that failed.
	Name string
	// Needs are the hooks it waits on (in h's scope), in turn, before it runs (after those
	// of h.After).
	Needs []string
	// Run is the step; it may wait on more hooks on its way (h.Wait).
	Run func(ctx context.Context) error
}

// Run runs every node once its needs stand, each beside the others, and returns when every
// node has run or been skipped. A node one of whose needs failed, or whose wait ctx ended,
// does not run: skip gets it (its index in nodes) and why (a *NeedError or a
// *StoppedError), and its hook fails.
func (h *Hooks) Run(ctx context.Context, nodes []Node, skip func(i int, why error)) {
	var mu sync.Mutex
	remaining := map[string]int{}
	failed := map[string]error{}
	for _, n := range nodes {
		remaining[n.Name]++
	}
	finish := func(name string, err error) {
		mu.Lock()
		if err != nil && failed[name] == nil {
			failed[name] = err
		}
		remaining[name]--
		last, ferr := remaining[name] == 0, failed[name]
		mu.Unlock()
		if last {
			h.End(name, ferr)
		}
	}
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := h.wait(ctx, "", h.outerNeeds(n.Name))
			if err == nil {
				err = h.Wait(ctx, n.Needs...)
			}
			if err != nil {
				if skip != nil {
					skip(i, err)
				}
				finish(n.Name, err)
				return
			}
			finish(n.Name, n.Run(ctx))
		}()
	}
	wg.Wait()
}
