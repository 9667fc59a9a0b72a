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
	// Check, when set, is asked before each write: the cluster lock's, an error once the
	// lock may have expired, so that a run that lost it sends nothing more.
	Check func() error
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
	if err := t.refuse(r); err != nil {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, &WriteRefusedError{Err: err}
	}
	return t.next.RoundTrip(r)
}

// refuse says why r may not be sent; nil when it may.
func (t guarded) refuse(r *http.Request) error {
	if !Persists(r) {
		return nil
	}
	p, ok := r.Context().Value(permitKey{}).(WritePermit)
	switch {
	case !ok && t.guard.required.Load():
		return fmt.Errorf("refused to write outside a run of the plan-then-write protocol (%s %s): a bug of istioctl's, nothing was sent", r.Method, r.URL.Path)
	case ok && p.Check != nil:
		return p.Check()
	}
	return nil
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
