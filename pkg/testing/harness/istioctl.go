// Package harness is what end-to-end tests of istioctl share beside pkg/testing/cluster:
// one way to run istioctl (in this process or a built binary, with stdin, as at a terminal,
// at another version, in the background), its -o json event lines, spec files, one poller
// (Eventually), the apiserver's audit log and object snapshots, and a recording proxy.
// Small object fixtures, which the operator packages' own tests use too, are in
// harness/fixture: this package imports pkg/cmd and the operator packages, which those
// tests could not import back.
//
// The in-process runner builds the root command as cmd/istioctl does (cmd.NewRootCommand
// with the test's streams); pkg/cmd's tests are an external test package (cmd_test), so
// importing pkg/cmd from here makes no cycle.
package harness

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/pkg/cmd"
)

// Istioctl runs istioctl for a test. The zero value but T runs it in this process with no
// --kubeconfig and an empty stdin.
type Istioctl struct {
	T testing.TB
	// Kubeconfig and Context, when set, come before the arguments as --kubeconfig and
	// --context.
	Kubeconfig string
	Context    string
	// Bin is a built binary (BuildIstioctl); empty runs the root command in this process.
	Bin string
	// Env is added to the test's environment for a binary (with NO_COLOR=1, which every
	// binary run gets); Isolated leaves out the test's environment but PATH. In process
	// the test's own environment counts (t.Setenv): Env must be empty.
	Env      []string
	Isolated bool
	// Stdin is what the command reads; Terminal (in process) makes the streams a terminal,
	// so that a prompt asks.
	Stdin    string
	Terminal bool
	// Ctx (in process) is the command's context: a test cancels it as Ctrl-C would. Nil is
	// context.Background(), not t.Context(): tests run istioctl from their Cleanup
	// functions too, after that is done.
	Ctx context.Context
	// Out also gets stdout as it is written (a test that follows the progress).
	Out io.Writer
}

// Result is what a run of istioctl gave.
type Result struct {
	Stdout, Stderr string
	// Err is the command's error in process, the *exec.ExitError of a binary.
	Err error
	// Code is the exit code (main's for an error in process: ExitCode).
	Code int
	// combined is a binary's stdout and stderr interleaved as written.
	combined  string
	inProcess bool
}

// ErrorLine is what main prints for the error of a run in process ("Error: ...\n"; empty
// for a binary, which printed its own, or without an error).
func (r Result) ErrorLine() string {
	if !r.inProcess || r.Err == nil {
		return ""
	}
	return "Error: " + r.Err.Error() + "\n"
}

// Output is what a person would see: in process stdout, then stderr, then the error line;
// a binary's two streams interleaved as it wrote them.
func (r Result) Output() string {
	if r.inProcess {
		return r.Stdout + r.Stderr + r.ErrorLine()
	}
	return r.combined
}

// Run runs istioctl in process with args (and nothing before them): stdout, stderr and
// the command's error.
func Run(t testing.TB, args ...string) (string, string, error) {
	t.Helper()
	r := Istioctl{T: t}.Run(args...)
	return r.Stdout, r.Stderr, r.Err
}

// Asking runs istioctl in process as at a terminal, answer on stdin (a prompt asks).
func Asking(t testing.TB, answer string, args ...string) (string, string, error) {
	t.Helper()
	r := Istioctl{T: t, Stdin: answer, Terminal: true}.Run(args...)
	return r.Stdout, r.Stderr, r.Err
}

func (x Istioctl) args(args []string) []string {
	var out []string
	if x.Kubeconfig != "" {
		out = append(out, "--kubeconfig", x.Kubeconfig)
	}
	if x.Context != "" {
		out = append(out, "--context", x.Context)
	}
	return append(out, args...)
}

// Run runs istioctl with args and returns what it gave; a binary that cannot start fails
// the test.
func (x Istioctl) Run(args ...string) Result {
	x.T.Helper()
	if x.Bin == "" {
		return x.runInProcess(x.args(args))
	}
	c := x.command(args)
	c.Stdin = strings.NewReader(x.Stdin)
	var out, errOut bytes.Buffer
	var combined lockedBuffer
	c.Stdout = io.MultiWriter(x.stdout(&out), &combined)
	c.Stderr = io.MultiWriter(&errOut, &combined)
	err := c.Run()
	r := Result{Stdout: out.String(), Stderr: errOut.String(), Err: err, combined: combined.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.Code = exit.ExitCode()
	case err != nil:
		x.T.Fatalf("istioctl %s: %v", strings.Join(args, " "), err)
	}
	return r
}

func (x Istioctl) runInProcess(args []string) Result {
	x.T.Helper()
	if len(x.Env) > 0 || x.Isolated {
		x.T.Fatalf("istioctl in process takes the test's environment: Env and Isolated need a binary")
	}
	var out, errOut bytes.Buffer
	streams := cmd.Streams{In: strings.NewReader(x.Stdin), Out: x.stdout(&out), ErrOut: &errOut}
	if x.Terminal {
		streams.IsTerminal = func() bool { return true }
	}
	root := cmd.NewRootCommand(streams)
	root.SetArgs(args)
	ctx := x.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	err := root.ExecuteContext(ctx)
	return Result{Stdout: out.String(), Stderr: errOut.String(), Err: err, Code: ExitCode(err), inProcess: true}
}

// stdout is where stdout goes: buf, and Out.
func (x Istioctl) stdout(buf io.Writer) io.Writer {
	if x.Out == nil {
		return buf
	}
	return io.MultiWriter(buf, x.Out)
}

// command is the binary's command line and environment.
func (x Istioctl) command(args []string) *exec.Cmd {
	c := exec.Command(x.Bin, x.args(args)...)
	env := os.Environ()
	if x.Isolated {
		env = []string{"PATH=" + os.Getenv("PATH")}
	}
	c.Env = append(append(env, "NO_COLOR=1"), x.Env...)
	return c
}

// MustRun runs istioctl, fails the test on an error (with both streams) and returns stdout.
func (x Istioctl) MustRun(args ...string) string {
	x.T.Helper()
	r := x.Run(args...)
	if r.Err != nil {
		x.T.Fatalf("istioctl %s: %v\n%s\n%s", strings.Join(args, " "), r.Err, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// Try runs istioctl and returns its Output and error.
func (x Istioctl) Try(args ...string) (string, error) {
	x.T.Helper()
	r := x.Run(args...)
	return r.Output(), r.Err
}

// MustOutput runs istioctl, fails the test on an error and returns its Output.
func (x Istioctl) MustOutput(args ...string) string {
	x.T.Helper()
	r := x.Run(args...)
	if r.Err != nil {
		x.T.Fatalf("istioctl %s: %v\n%s", strings.Join(args, " "), r.Err, r.Output())
	}
	return r.Output()
}

// PurgeAtEnd uninstalls everything (uninstall --purge -y) when the test ends, whatever
// happened; an error is not checked.
func (x Istioctl) PurgeAtEnd() {
	x.T.Cleanup(func() { _ = x.Run("uninstall", "--purge", "-y") })
}

// ExitCode is the code main gives err (cmd/istioctl's table): 0 for none, a command's own
// (an *cmd.ExitError's), 64 for a bad command line, else the event's (the lock's 3, 130
// for an interrupted run, 1).
func ExitCode(err error) int {
	var exit *cmd.ExitError
	var usage *cmd.UsageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.Code
	case errors.As(err, &usage):
		return 64
	}
	return event.ExitCode(err)
}

// lockedBuffer is a buffer two streams write to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
