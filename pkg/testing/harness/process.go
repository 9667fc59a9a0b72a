package harness

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Lines keeps what a process writes and tells when a line matching a condition appears.
type Lines struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	partial string
	all     []string
	waits   []lineWait
}

type lineWait struct {
	match func(string) bool
	ch    chan struct{}
}

func (l *Lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	text := l.partial + string(p)
	parts := strings.Split(text, "\n")
	l.partial = parts[len(parts)-1]
	for _, line := range parts[:len(parts)-1] {
		l.all = append(l.all, line)
		kept := l.waits[:0]
		for _, w := range l.waits {
			if w.match(line) {
				close(w.ch)
			} else {
				kept = append(kept, w)
			}
		}
		l.waits = kept
	}
	return len(p), nil
}

// When is closed once a line matches (at once for one written already).
func (l *Lines) When(match func(string) bool) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan struct{})
	for _, line := range l.all {
		if match(line) {
			close(ch)
			return ch
		}
	}
	l.waits = append(l.waits, lineWait{match, ch})
	return ch
}

func (l *Lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Process is a run of a built istioctl in the background.
type Process struct {
	Name        string
	Cmd         *exec.Cmd
	Out, ErrOut *Lines
	exited      chan struct{}
	code        int
}

// Start starts the binary (Bin) with args in the background, its output kept; name says
// which run it is in messages. It is killed when the test ends, if still running.
func (x Istioctl) Start(name string, args ...string) *Process {
	x.T.Helper()
	if x.Bin == "" {
		x.T.Fatalf("%s: Start needs a built binary (Bin)", name)
	}
	p := &Process{Name: name, Out: &Lines{}, ErrOut: &Lines{}, exited: make(chan struct{})}
	p.Cmd = x.command(args)
	p.Cmd.Stdin = strings.NewReader(x.Stdin)
	p.Cmd.Stdout, p.Cmd.Stderr = p.Out, p.ErrOut
	if err := p.Cmd.Start(); err != nil {
		x.T.Fatal(err)
	}
	go func() {
		defer close(p.exited)
		err := p.Cmd.Wait()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			p.code = exit.ExitCode()
		case err != nil:
			p.code = -1
		}
	}()
	x.T.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.Cmd.Process.Signal(syscall.SIGCONT)
			_ = p.Cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Code is the exit code, once Exited is closed (-1 for a process that did not exit on its
// own, as one killed by a signal).
func (p *Process) Code() int { return p.code }

// Wait waits for the process to exit and returns its exit code; after timeout it sends
// SIGQUIT (its goroutines say where it hangs) and fails the test.
func (p *Process) Wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.code
	case <-time.After(timeout):
		_ = p.Cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
		}
		t.Fatalf("%s still runs after %v:\n%s\n%s", p.Name, timeout, p.Out, p.ErrOut)
		return 0
	}
}

// WaitFor waits up to 2 minutes for ch (a line of its output: Lines.When), failing the
// test when the process exits first.
func (p *Process) WaitFor(t testing.TB, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-p.exited:
		t.Fatalf("%s exited (%d) before %s:\n%s\n%s", p.Name, p.code, what, p.Out, p.ErrOut)
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s: no %s in 2 minutes:\n%s\n%s", p.Name, what, p.Out, p.ErrOut)
	}
}
