package lock

import (
	"fmt"
	"time"

	"github.com/istioctl-installer/istioctl/operator/event"
)

// what names the lock in messages.
const what = "the cluster lock (Lease " + Namespace + "/" + Name + ")"

// HeldError is a writer that did not get the lock: another holds it, and the wait
// (--lock-timeout) ended first. Nothing was written.
type HeldError struct {
	Holder Holder
	// Waited is how long this writer waited; Timeout how long it would.
	Waited, Timeout time.Duration
}

func (e *HeldError) Error() string {
	held := ""
	if !e.Holder.Acquired.IsZero() {
		held = fmt.Sprintf(" (for %s)", max(0, time.Since(e.Holder.Acquired)).Round(time.Second))
	}
	wait := fmt.Sprintf("gave up after waiting %s (--lock-timeout)", roundDuration(e.Waited))
	if e.Timeout <= 0 {
		wait = "not waiting: --lock-timeout is 0"
	}
	expiry := "its lease duration"
	if e.Holder.Duration > 0 {
		expiry = e.Holder.Duration.String()
	}
	return fmt.Sprintf("another istioctl is writing to this cluster: %s holds %s%s; %s. Nothing was written. "+
		"Run again when it is done. If that istioctl is gone, a writer that waits takes the lock over once it has seen it unrenewed for %s; "+
		"'kubectl delete lease -n %s %s' releases it at once (only when you are sure it is gone)",
		e.Holder, what, held, wait, expiry, Namespace, Name)
}

// ExitCode is istioctl's code for it (docs/exit-codes.md).
func (e *HeldError) ExitCode() int { return event.ExitLocked }

// LostError is a holder that lost the lock while writing: it could not renew it in time,
// or another writer has it now. The holder stops without writing more.
type LostError struct {
	// To is who holds the lock now, when known.
	To *Holder
	// Why says how it was lost.
	Why string
	// Cause is the last error renewing it, if any.
	Cause error
}

func (e *LostError) Error() string {
	msg := "lost " + what + ": " + e.Why
	if e.To != nil && e.To.Identity != "" {
		msg += "; it is held by " + e.To.String()
	}
	if e.Cause != nil {
		msg += " (" + e.Cause.Error() + ")"
	}
	return msg + ". Nothing more was written; what was applied stays: run the same command again"
}

func (e *LostError) Unwrap() error { return e.Cause }

// ExitCode is 1, even when the last renewal failed because the run was cancelled: the
// run did not stop at a safe point of its own, it lost the right to write.
func (e *LostError) ExitCode() int { return event.ExitFailed }

// ForbiddenError is a writer that may not take the lock: the user lacks a permission on
// the Lease. Nothing was written.
type ForbiddenError struct {
	// Verb is the refused request's: get, create or update.
	Verb string
	Err  error
}

func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("cannot take %s: permission denied to %s leases.coordination.k8s.io in namespace %s (%v). "+
		"Nothing was written. Every istioctl command that writes takes this lock first, so that no two write at once: "+
		"it needs get, create and update on leases in %s ('istioctl x precheck' lists them); ask a cluster admin for them, "+
		"or pass --skip-lock if you are sure nothing else writes to this cluster now",
		what, e.Verb, Namespace, e.Err, Namespace)
}

func (e *ForbiddenError) Unwrap() error { return e.Err }

// roundDuration rounds for people: whole seconds, or tenths under 10 s.
func roundDuration(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
