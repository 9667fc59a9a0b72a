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

func TestWithExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream []Event
		want   []int // the done events' codes, in order
	}{
		{"success", []Event{{Type: Plan}, {Type: Done}}, []int{0}},
		{"failure", []Event{{Type: Done, Error: "x"}}, []int{1}},
		{"interrupted", []Event{{Type: Done, Status: "interrupted", Error: "interrupted"}}, []int{130}},
		{"given", []Event{{Type: Done, Error: "x", ExitCode: Code(130)}}, []int{130}},
		{"atomic restore", []Event{{Type: Done, Error: "x"}, {Type: Warning}, {Type: Done, Status: "rollback"}}, []int{1, 1}},
		{"dry run", []Event{{Type: Done, Status: "dry-run"}}, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &Recorder{}
			s := WithExitCodes(rec)
			for _, e := range tc.stream {
				s.Emit(e)
			}
			var got []int
			for _, e := range rec.Events {
				switch {
				case e.Type == Done && e.ExitCode != nil:
					got = append(got, *e.ExitCode)
				case e.Type == Done:
					t.Errorf("done without an exit code")
				case e.ExitCode != nil:
					t.Errorf("%s event with an exit code", e.Type)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("codes %v, want %v", got, tc.want)
			}
		})
	}
}
