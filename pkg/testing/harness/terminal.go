package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Terminal is a tmux server of the test's own (its socket in a fresh directory, no
// configuration file), with one session "t"; stopped when the test ends. It is the terminal
// a person sees: what istioctl drew is read back with capture-pane, scrollback included.
type Terminal struct {
	t      testing.TB
	socket string
	env    []string
}

// NewTerminal starts a session of width×height running command (through sh) with env added to
// the test's environment; a command that should stay on the screen after it ends keeps its
// pane alive itself (exec sleep). tmux is a test dependency (.ci/run installs it): without it the
// test fails.
func NewTerminal(t testing.TB, width, height int, env []string, command string) *Terminal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is needed to test the terminal view: install it (.ci/run does): %v", err)
	}
	// A short path: a unix socket's path has a limit of about 100 bytes.
	dir, err := os.MkdirTemp("", "tmux")
	if err != nil {
		t.Fatal(err)
	}
	s := &Terminal{t: t, socket: filepath.Join(dir, "s")}
	for _, kv := range os.Environ() {
		// A test run inside a tmux must not make this one a nested client of it.
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") {
			s.env = append(s.env, kv)
		}
	}
	s.env = append(s.env, env...)
	t.Cleanup(func() {
		_ = exec.Command("tmux", "-S", s.socket, "kill-server").Run()
		_ = os.RemoveAll(dir)
	})
	s.tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), command)
	// Scrollback enough for a verbose run.
	s.tmux("set-option", "-g", "history-limit", "10000")
	return s
}

func (s *Terminal) tmux(args ...string) string {
	s.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", s.socket}, args...)...)
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Lines is what the pane holds, scrollback and screen, one entry per line as written:
// with joined, a line the terminal wrapped is one entry (-J), else one per row. Trailing
// blanks are dropped.
func (s *Terminal) Lines(joined bool) []string {
	s.t.Helper()
	args := []string{"capture-pane", "-p", "-t", "t", "-S", "-", "-E", "-"}
	if joined {
		args = append(args, "-J")
	}
	var out []string
	for _, l := range strings.Split(s.tmux(args...), "\n") {
		out = append(out, strings.TrimRight(l, " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// Coloured says whether the pane shows text in a colour (capture-pane -e keeps the SGR
// sequences: tmux writes a foreground colour as ESC [ 3x m or ESC [ 38;...m).
func (s *Terminal) Coloured() bool {
	s.t.Helper()
	return colourSGR.MatchString(s.tmux("capture-pane", "-p", "-e", "-t", "t", "-S", "-", "-E", "-"))
}

var colourSGR = regexp.MustCompile(`\x1b\[(\d+;)*(3[0-7]|38;[0-9;]+|9[0-7])m`)

// Screen is the pane's text as one string (lines joined), for messages and Contains.
func (s *Terminal) Screen() string { return strings.Join(s.Lines(true), "\n") }

// WaitFor polls the pane (every 20 ms: a screen may not stay long) until ok says yes,
// failing after timeout with what it shows.
func (s *Terminal) WaitFor(what string, timeout time.Duration, ok func(screen string) bool) string {
	s.t.Helper()
	var screen string
	err := Within(timeout, 20*time.Millisecond, func() (bool, string) {
		screen = s.Screen()
		return ok(screen), ""
	})
	if err != nil {
		s.t.Fatalf("tmux: no %s within %v; the pane shows:\n%s", what, timeout, screen)
	}
	return screen
}

// Keys types text and presses Enter.
func (s *Terminal) Keys(text string) {
	s.t.Helper()
	s.tmux("send-keys", "-t", "t", "-l", text)
	s.tmux("send-keys", "-t", "t", "Enter")
}

// Resize sets the window's size, as a person dragging the terminal's corner would.
func (s *Terminal) Resize(width, height int) {
	s.t.Helper()
	s.tmux("resize-window", "-t", "t", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height))
}
