package schedule

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// trace records the order nodes ran in.
type trace struct {
	mu  sync.Mutex
	ran []string
}

func (tr *trace) node(name string, err error, needs ...string) Node {
	return Node{Name: name, Needs: needs, Run: func(context.Context) error {
		tr.mu.Lock()
		tr.ran = append(tr.ran, name)
		tr.mu.Unlock()
		return err
	}}
}

func TestRun(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		nodes   func(*trace) []Node
		ran     []string // in order (only checked where the graph orders them)
		skipped map[string]string
	}{
		{
			name: "a chain runs in order",
			nodes: func(tr *trace) []Node {
				return []Node{tr.node("c", nil, "b"), tr.node("b", nil, "a"), tr.node("a", nil)}
			},
			ran: []string{"a", "b", "c"},
		},
		{
			name: "a failed node skips what needs it, and what needs that",
			nodes: func(tr *trace) []Node {
				return []Node{tr.node("a", boom), tr.node("b", nil, "a"), tr.node("c", nil, "b")}
			},
			ran:     []string{"a"},
			skipped: map[string]string{"b": "a did not stand: boom", "c": "b did not stand: a did not stand: boom"},
		},
		{
			name: "a name shared by nodes stands once all of them ran",
			nodes: func(tr *trace) []Node {
				return []Node{tr.node("gw", nil, "base"), tr.node("gw", nil, "base"), tr.node("base", nil), tr.node("after", nil, "gw")}
			},
			ran: []string{"base", "gw", "gw", "after"},
		},
		{
			name: "one failed node of a shared name fails it",
			nodes: func(tr *trace) []Node {
				return []Node{tr.node("gw", nil), tr.node("gw", boom), tr.node("after", nil, "gw")}
			},
			skipped: map[string]string{"after": "gw did not stand: boom"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace{}
			skipped := map[string]string{}
			var mu sync.Mutex
			nodes := tc.nodes(tr)
			New().Run(context.Background(), nodes, func(i int, err error) {
				mu.Lock()
				defer mu.Unlock()
				skipped[nodes[i].Name] = err.Error()
			})
			if tc.ran != nil && !slices.Equal(tr.ran, tc.ran) {
				t.Errorf("ran %v, want %v", tr.ran, tc.ran)
			}
			for n, why := range tc.skipped {
				if skipped[n] != why {
					t.Errorf("%s skipped with %q, want %q", n, skipped[n], why)
				}
			}
			if len(skipped) != len(tc.skipped) {
				t.Errorf("skipped %v, want %v", skipped, tc.skipped)
			}
		})
	}
}

// A node waiting on a readiness hook another node reports on its way starts then, not
// once that node ends: the primary's Pilot lets the remote in while the primary goes on.
func TestNodeStartsOnItsHook(t *testing.T) {
	h := New()
	remoteStarted := make(chan struct{})
	var order []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	h.Run(context.Background(), []Node{
		{Name: "cluster-1", Run: func(ctx context.Context) error {
			h.Scope("cluster-1").End("Pilot", nil)
			note("pilot ready")
			select { // the rest of the primary's install goes on until the remote started
			case <-remoteStarted:
			case <-time.After(time.Minute):
				t.Error("the remote did not start within a minute of the primary's Pilot")
			}
			note("primary done")
			return nil
		}},
		{Name: "cluster-3", Needs: []string{"cluster-1/Pilot"}, Run: func(ctx context.Context) error {
			note("remote started")
			close(remoteStarted)
			return nil
		}},
	}, nil)
	if want := []string{"pilot ready", "remote started", "primary done"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
}

func TestScopeEndsWithItsNode(t *testing.T) {
	boom := errors.New("its cacerts could not be written")
	h := New()
	h.End("cluster-1", boom) // the node ended before its install reported anything
	err := h.Wait(context.Background(), "cluster-1/Pilot")
	var need *NeedError
	if !errors.As(err, &need) || need.Need != "cluster-1/Pilot" || !errors.Is(err, boom) {
		t.Fatalf("waiting on cluster-1/Pilot: %v, want its node's failure", err)
	}
	// A hook ended first keeps its end.
	h.Scope("cluster-2").End("Pilot", nil)
	h.End("cluster-2", boom)
	if err := h.Scope("cluster-2").Wait(context.Background(), "Pilot"); err != nil {
		t.Errorf("cluster-2/Pilot stood before its node failed: %v", err)
	}
	// A name that merely begins like the node's is not within it.
	h.End("cluster-2x", nil)
	if err := h.Wait(context.Background(), "cluster-2x"); err != nil {
		t.Errorf("cluster-2x: %v", err)
	}
}

func TestStoppedWhileWaiting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := New()
	var got error
	h.Run(ctx, []Node{
		{Name: "a", Run: func(context.Context) error { cancel(); return nil }, Needs: []string{"never"}},
		{Name: "b", Run: func(context.Context) error { cancel(); return nil }},
	}, func(_ int, err error) { got = err })
	var st *StoppedError
	if !errors.As(got, &st) || st.Need != "never" || !errors.Is(got, context.Canceled) {
		t.Fatalf("a skipped with %v, want stopped while waiting for never", got)
	}
}

func TestAfterGatesAllButExcept(t *testing.T) {
	for _, tc := range []struct {
		name    string
		primary error // how the primary's Pilot ends
		want    []string
		skipped string // the need the remote's Pilot was skipped for
	}{
		{name: "primary stands", want: []string{"remote Base", "primary Pilot", "remote Pilot"}},
		{name: "primary fails", primary: errors.New("istiod crash-loops"), want: []string{"remote Base", "primary Pilot"}, skipped: "cluster-1/Pilot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := New()
			var mu sync.Mutex
			var order []string
			note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
			baseDone := make(chan struct{})
			go func() { // the primary's Pilot ends only after the remote's Base ran
				select {
				case <-baseDone:
				case <-time.After(time.Minute):
					t.Error("the remote's Base waited for the primary")
				}
				note("primary Pilot")
				h.Scope("cluster-1").End("Pilot", tc.primary)
			}()
			remote := h.Scope("cluster-3").After([]string{"cluster-1/Pilot"}, "Base")
			var skipped error
			remote.Run(context.Background(), []Node{
				{Name: "Base", Run: func(context.Context) error { note("remote Base"); close(baseDone); return nil }},
				{Name: "Pilot", Needs: []string{"Base"}, Run: func(context.Context) error { note("remote Pilot"); return nil }},
			}, func(i int, why error) { skipped = why })
			if !slices.Equal(order, tc.want) {
				t.Errorf("order %v, want %v", order, tc.want)
			}
			var need *NeedError
			switch {
			case tc.skipped == "" && skipped != nil:
				t.Errorf("skipped: %v", skipped)
			case tc.skipped != "" && (!errors.As(skipped, &need) || need.Need != tc.skipped):
				t.Errorf("skipped for %v, want a need error for %s", skipped, tc.skipped)
			}
			// The view's own hooks stay in its scope: the remote's Pilot ended as cluster-3/Pilot.
			if err := h.Wait(context.Background(), "cluster-3/Base"); err != nil {
				t.Errorf("cluster-3/Base: %v", err)
			}
		})
	}
}
