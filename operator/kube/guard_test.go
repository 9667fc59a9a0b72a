package kube

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWriteGuard: which requests of a guarded client reach the server, inside a run (its
// permit in the context, its check passing or not) and outside one.
func TestWriteGuard(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path)
		mu.Unlock()
	}))
	defer srv.Close()
	guard := &writeGuard{}
	guard.required.Store(true)
	client := &http.Client{Transport: guarded{next: http.DefaultTransport, guard: guard}}

	lost := errors.New("lost the cluster lock")
	inRun := WithWritePermit(context.Background(), WritePermit{})
	lostRun := WithWritePermit(context.Background(), WritePermit{Fence: func() (time.Time, error) { return time.Time{}, lost }})
	for _, tc := range []struct {
		name         string
		ctx          context.Context
		method, path string
		body         string
		sent         bool
	}{
		{"a read outside a run", context.Background(), "GET", "/api/v1/namespaces/x/secrets/y", "", true},
		{"a write outside a run", context.Background(), "PATCH", "/api/v1/namespaces/x/configmaps/y", "{}", false},
		{"a delete outside a run", context.Background(), "DELETE", "/api/v1/namespaces/x/configmaps/y", `{"kind":"DeleteOptions"}`, false},
		{"a server-side dry run outside a run", context.Background(), "PATCH", "/api/v1/namespaces/x/configmaps/y?dryRun=All", "{}", true},
		{"a dry-run delete outside a run", context.Background(), "DELETE", "/api/v1/namespaces/x/configmaps/y", `{"kind":"DeleteOptions","dryRun":["All"]}`, true},
		{"an access review outside a run", context.Background(), "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "{}", true},
		{"a write in a run", inRun, "POST", "/api/v1/namespaces/x/secrets", "{}", true},
		{"a write in a run that lost its lock", lostRun, "PUT", "/api/v1/namespaces/x/secrets/y", "{}", false},
		{"a dry run in a run that lost its lock", lostRun, "PATCH", "/api/v1/namespaces/x/secrets/y?dryRun=All", "{}", true},
	} {
		mu.Lock()
		got = nil
		mu.Unlock()
		req, err := http.NewRequestWithContext(tc.ctx, tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if resp != nil {
			resp.Body.Close()
		}
		var refused *WriteRefusedError
		mu.Lock()
		sent := len(got) == 1
		mu.Unlock()
		switch {
		case sent != tc.sent:
			t.Errorf("%s: sent %v, want %v", tc.name, sent, tc.sent)
		case !tc.sent && !errors.As(err, &refused):
			t.Errorf("%s: %v, want a *WriteRefusedError", tc.name, err)
		case tc.ctx == lostRun && !tc.sent && !errors.Is(err, lost):
			t.Errorf("%s: %v, want the lock's error", tc.name, err)
		case tc.sent && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// deadlines records the deadline of each request's context that passes through it.
type deadlines struct {
	next http.RoundTripper
	mu   sync.Mutex
	got  map[string]time.Time
}

func (d *deadlines) RoundTrip(r *http.Request) (*http.Response, error) {
	dl, _ := r.Context().Deadline()
	d.mu.Lock()
	d.got[r.Method+" "+r.URL.Path] = dl
	d.mu.Unlock()
	return d.next.RoundTrip(r)
}

// TestFencedWrite: a write in a run gets its permit's deadline (the lock's fence) as its
// context's, a read and a write without one none; a write still in flight at the deadline
// is cancelled, the server sees it go, and the error says so with the lock's loss.
func TestFencedWrite(t *testing.T) {
	cancelled := make(chan bool, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server notices a closed connection
		if r.URL.Path != "/slow" {
			_, _ = w.Write([]byte("ok"))
			return
		}
		select {
		case <-r.Context().Done():
			cancelled <- true
		case <-time.After(30 * time.Second):
			cancelled <- false
		}
	}))
	defer srv.Close()
	rec := &deadlines{next: http.DefaultTransport, got: map[string]time.Time{}}
	client := &http.Client{Transport: guarded{next: rec, guard: &writeGuard{}}}
	do := func(ctx context.Context, method, path string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}

	fence := time.Now().Add(time.Hour)
	held := WithWritePermit(context.Background(), WritePermit{Fence: func() (time.Time, error) { return fence, nil }})
	noFence := WithWritePermit(context.Background(), WritePermit{Fence: func() (time.Time, error) { return time.Time{}, nil }})
	for _, tc := range []struct {
		name         string
		ctx          context.Context
		method, path string
		want         time.Time
	}{
		{"a write in a run", held, "PATCH", "/write", fence},
		{"a read in a run", held, "GET", "/read", time.Time{}},
		{"a write whose permit sets no deadline", noFence, "PUT", "/nofence", time.Time{}},
	} {
		body, err := do(tc.ctx, tc.method, tc.path)
		if err != nil || body != "ok" {
			t.Errorf("%s: %q %v (the body must stay readable until closed)", tc.name, body, err)
		}
		if got := rec.got[tc.method+" "+tc.path]; !got.Equal(tc.want) {
			t.Errorf("%s: deadline %v, want %v", tc.name, got, tc.want)
		}
	}

	// In flight at the fence: the first check passes with a deadline 200 ms away; by the
	// time it has passed, the lock is lost (no renewal came).
	lost := errors.New("lost the cluster lock")
	var checks int
	var mu sync.Mutex
	tight := WithWritePermit(context.Background(), WritePermit{Fence: func() (time.Time, error) {
		mu.Lock()
		defer mu.Unlock()
		if checks++; checks == 1 {
			return time.Now().Add(200 * time.Millisecond), nil
		}
		return time.Time{}, lost
	}})
	_, err := do(tight, "POST", "/slow")
	if !errors.Is(err, errFence) || !errors.Is(err, lost) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a write in flight at the fence ended with %v, want it cancelled, saying so and the lock's loss", err)
	}
	if !<-cancelled {
		t.Error("the server never saw the write cancelled")
	}
	// The caller's own cancellation stays its own.
	ctx, cancel := context.WithCancel(held)
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	if _, err := do(ctx, "POST", "/slow"); err == nil || errors.Is(err, errFence) {
		t.Errorf("a write the caller cancelled: %v, want its own cancellation", err)
	}
	<-cancelled
}
