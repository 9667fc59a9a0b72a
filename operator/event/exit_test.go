package event

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("x"), 1},
		{fmt.Errorf("interrupted: %w", context.Canceled), 130},
		{context.DeadlineExceeded, 1},
		{fmt.Errorf("install: %w", coded{ExitLocked, nil}), 3},
		// A Coder wins over the context.Canceled it wraps (a lost lock's last renewal).
		{coded{ExitFailed, context.Canceled}, 1},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

type coded struct {
	code  int
	cause error
}

func (c coded) Error() string { return fmt.Sprintf("coded %d", c.code) }
func (c coded) ExitCode() int { return c.code }
func (c coded) Unwrap() error { return c.cause }
