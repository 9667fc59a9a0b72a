package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// WriteRefusedError is what a request that would write gets when the client's write guard
// refuses it: nothing was sent.
type WriteRefusedError struct{ Err error }

func (e *WriteRefusedError) Error() string { return e.Err.Error() }
func (e *WriteRefusedError) Unwrap() error { return e.Err }

// WritePermit is what lets a request that would change the cluster through: the permit of
// a run of the plan-then-write protocol (operator/action), carried by the context of every
// request the run makes (WithWritePermit).
type WritePermit struct {
	// Fence, when set, is asked before each write: the cluster lock's (lock.Held.Fence).
	// An error once the lock may have expired, so that a run that lost it sends nothing
	// more; else the write's deadline, when the lock may expire unless renewed first: a
	// write still in flight then is cancelled (a zero time sets none).
	Fence func() (deadline time.Time, err error)
}

type permitKey struct{}

// WithWritePermit is ctx carrying p: the requests made with it may write.
func WithWritePermit(ctx context.Context, p WritePermit) context.Context {
	return context.WithValue(ctx, permitKey{}, p)
}

// HasWritePermit says whether ctx carries a run's write permit.
func HasWritePermit(ctx context.Context) bool {
	_, ok := ctx.Value(permitKey{}).(WritePermit)
	return ok
}

// writeGuard says whether writes need a permit (GuardWrites).
type writeGuard struct{ required atomic.Bool }

// guarded looks at each request that can change the cluster (anything but GET, HEAD and
// OPTIONS; a watch is a GET) before it is sent: one place that no writer of the engine can
// bypass. A server-side dry run and an access or token review persist nothing and always
// pass; any other write needs its context's permit (on a client that GuardWrites), whose
// check must pass.
type guarded struct {
	next  http.RoundTripper
	guard *writeGuard
}

// WrappedRoundTripper lets client-go cancel a timed-out request through the guard
// (utilnet.RoundTripperWrapper; without it client-go logs that it cannot).
func (t guarded) WrappedRoundTripper() http.RoundTripper { return t.next }

func (t guarded) RoundTrip(r *http.Request) (*http.Response, error) {
	deadline, err := t.refuse(r)
	if err != nil {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, &WriteRefusedError{Err: err}
	}
	if deadline.IsZero() {
		return t.next.RoundTrip(r)
	}
	return fenced(t.next, r, deadline)
}

// refuse says why r may not be sent (nil when it may), and by when it must be done (zero:
// no deadline of the guard's).
func (t guarded) refuse(r *http.Request) (time.Time, error) {
	if !Persists(r) {
		return time.Time{}, nil
	}
	p, ok := r.Context().Value(permitKey{}).(WritePermit)
	switch {
	case !ok && t.guard.required.Load():
		return time.Time{}, fmt.Errorf("refused to write outside a run of the plan-then-write protocol (%s %s): a bug of istioctl's, nothing was sent", r.Method, r.URL.Path)
	case ok && p.Fence != nil:
		return p.Fence()
	}
	return time.Time{}, nil
}

// permitOf is the permit r's context carries (the zero one without).
func permitOf(r *http.Request) WritePermit {
	p, _ := r.Context().Value(permitKey{}).(WritePermit)
	return p
}

// errFence is the cause of a write cancelled at its permit's deadline.
var errFence = errors.New("the write was still in flight at the cluster lock's write deadline (its last renewal plus the renew deadline, " +
	"before any other writer may take the lock over), so it was cancelled: whether the apiserver applied it is unknown")

// fenced sends r with deadline as its context's: a write still in flight then is
// cancelled (its response body too), and its error says so, with the lock's loss when the
// fence has tripped meanwhile (it has, unless a renewal came in time). The deadline ends
// with the body's Close.
func fenced(next http.RoundTripper, r *http.Request, deadline time.Time) (*http.Response, error) {
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	resp, err := next.RoundTrip(r.WithContext(ctx))
	if err != nil {
		if r.Context().Err() == nil && ctx.Err() != nil { // the fence's deadline, not the caller's
			if _, lost := permitOf(r).Fence(); lost != nil {
				err = fmt.Errorf("%w; %w (%w)", errFence, lost, err)
			} else {
				err = fmt.Errorf("%w (%w)", errFence, err)
			}
		}
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends a fenced request's context once its response is read.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	defer b.cancel()
	return b.ReadCloser.Close()
}

// Persists says whether r can change the cluster: a request other than a read (GET, HEAD,
// OPTIONS; a watch is a GET) that persistsNothing does not cover.
func Persists(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return !persistsNothing(r)
}

// persistsNothing says r changes nothing: a server-side dry run (asked in the query, or
// in a delete's options), or an access or token review (a create the apiserver answers
// without storing anything).
func persistsNothing(r *http.Request) bool {
	if r.URL.Query().Get("dryRun") == "All" || (r.Method == http.MethodDelete && dryRunDelete(r)) {
		return true
	}
	return r.Method == http.MethodPost &&
		(strings.HasPrefix(r.URL.Path, "/apis/authorization.k8s.io/") || strings.HasPrefix(r.URL.Path, "/apis/authentication.k8s.io/"))
}

// dryRunDelete says a delete's options (its body) ask for a dry run. The body is read from
// a copy (GetBody): the request still sends its own.
func dryRunDelete(r *http.Request) bool {
	if r.GetBody == nil {
		return false
	}
	body, err := r.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	var opts struct {
		DryRun []string `json:"dryRun"`
	}
	if err := json.NewDecoder(io.LimitReader(body, 1<<16)).Decode(&opts); err != nil {
		return false
	}
	return slices.Contains(opts.DryRun, "All")
}

// GuardWrites makes every later request of this client that would change the cluster
// need a WritePermit in its context: a write made outside a run of the protocol fails with
// a *WriteRefusedError, unsent. Client.Config stays unguarded (the cluster lock's own
// requests go through it).
func (c *Client) GuardWrites() { c.guard.required.Store(true) }

// refused finds a guard's refusal in err (its reason, a lost lock's error, unwraps from it).
func refused(err error) (*WriteRefusedError, bool) {
	var r *WriteRefusedError
	if errors.As(err, &r) {
		return r, true
	}
	return nil, false
}
