package event

import (
	"context"
	"errors"
)

// The exit codes of istioctl, one table (docs/exit-codes.md); a run's done event carries its.
const (
	ExitOK     = 0
	ExitFailed = 1
	// ExitLocked: another istioctl held the cluster lock past --lock-timeout (operator/lock);
	// nothing was written.
	ExitLocked = 3
	// ExitUsage: a bad command line (unknown command or flag, wrong arguments, a missing -y
	// without a terminal), as upstream istioctl and sysexits' EX_USAGE.
	ExitUsage = 64
	// ExitInterrupted: stopped by Ctrl-C or SIGTERM at a safe point, as shells report SIGINT.
	ExitInterrupted = 130
)

// Coder is an error that carries its own exit code (the cluster lock's: ExitLocked for a
// writer that gave up waiting, ExitFailed for one that lost the lock, whatever it wraps).
type Coder interface {
	ExitCode() int
}

// ExitCode is the exit code of a run that ended with err: 0 for none, the code of a Coder
// in its chain, 130 when it was interrupted (its error is a context.Canceled), 1 otherwise.
func ExitCode(err error) int {
	var coder Coder
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &coder):
		return coder.ExitCode()
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	return ExitFailed
}

// Code returns a pointer to c, for Event.ExitCode.
func Code(c int) *int { return &c }
