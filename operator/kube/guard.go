package kube

import (
	"errors"
	"net/http"
	"sync/atomic"
)

// WriteRefusedError is what a request that would write gets when the client's write guard
// refuses it: nothing was sent.
type WriteRefusedError struct{ Err error }

func (e *WriteRefusedError) Error() string { return e.Err.Error() }
func (e *WriteRefusedError) Unwrap() error { return e.Err }

// writeGuard holds the check asked before every request that writes (nil: none).
type writeGuard struct{ check atomic.Pointer[func() error] }

// guarded asks the guard before each request that can change the cluster (anything but
// GET, HEAD and OPTIONS; a watch is a GET): one place that no writer of the engine can
// bypass, so a run that lost the cluster lock sends nothing more.
type guarded struct {
	next  http.RoundTripper
	guard *writeGuard
}

// WrappedRoundTripper lets client-go cancel a timed-out request through the guard
// (utilnet.RoundTripperWrapper; without it client-go logs that it cannot).
func (t guarded) WrappedRoundTripper() http.RoundTripper { return t.next }

func (t guarded) RoundTrip(r *http.Request) (*http.Response, error) {
	if check := t.guard.check.Load(); check != nil {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			if err := (*check)(); err != nil {
				if r.Body != nil {
					_ = r.Body.Close()
				}
				return nil, &WriteRefusedError{Err: err}
			}
		}
	}
	return t.next.RoundTrip(r)
}

// SetWriteGuard makes every later request of this client that writes ask check first, and
// fail with a *WriteRefusedError, unsent, when it returns an error; nil removes the guard.
// Client.Config stays unguarded (the lock's own requests go through it).
func (c *Client) SetWriteGuard(check func() error) {
	if check == nil {
		c.guard.check.Store(nil)
		return
	}
	c.guard.check.Store(&check)
}

// refused finds a guard's refusal in err.
func refused(err error) (error, bool) {
	var r *WriteRefusedError
	if errors.As(err, &r) {
		return r.Err, true
	}
	return nil, false
}
