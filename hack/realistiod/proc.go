package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// procState is what the pod's status shows of its container.
type procState struct {
	Running    bool
	Ready      bool
	Started    time.Time
	Restarts   int32
	LastExit   *exitInfo // the previous run's end, once it has restarted
	BackingOff time.Duration
}

type exitInfo struct {
	Code     int
	Reason   string
	Started  time.Time
	Finished time.Time
}

// supervisor runs one istiod process for one pod, as a kubelet runs its container: it
// starts it, probes /ready, restarts it with back-off when it exits and stops it when told.
type supervisor struct {
	key     string // namespace/pod
	uid     string
	created time.Time // the pod's
	binary  string
	dir     string // the pod's directory: root/ (the container's filesystem), log, kubeconfig
	logPath string
	launch  *launch
	notify  func()
	grace   time.Duration

	mu    sync.Mutex
	state procState
	pid   int

	cancel context.CancelFunc
	done   chan struct{}
}

func (s *supervisor) root() string { return filepath.Join(s.dir, "root") }

// snapshot returns the container's state now.
func (s *supervisor) snapshot() procState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

func (s *supervisor) set(f func(*procState)) {
	s.mu.Lock()
	before := s.state
	f(&s.state)
	changed := before != s.state
	s.mu.Unlock()
	if changed {
		s.notify()
	}
}

// start runs the supervision loop until stop.
func (s *supervisor) start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		s.loop(ctx)
	}()
}

// stop ends the process (SIGTERM, then SIGKILL after the grace period) and waits for it.
func (s *supervisor) stop() {
	s.cancel()
	<-s.done
}

// Back-off between restarts, as a kubelet's: 10 s doubling to 5 minutes, reset after 10
// minutes of running.
const (
	backoffFirst = 10 * time.Second
	backoffMax   = 5 * time.Minute
	backoffReset = 10 * time.Minute
)

func (s *supervisor) loop(ctx context.Context) {
	backoff := backoffFirst
	for {
		started := time.Now()
		code, reason, err := s.runOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			log.Printf("%s: %v", s.key, err)
		}
		if time.Since(started) > backoffReset {
			backoff = backoffFirst
		}
		log.Printf("%s: istiod exited (%s, code %d); restarting in %s; its last lines:\n%s", s.key, reason, code, backoff, lastLines(s.logPath, 5))
		s.set(func(st *procState) {
			st.Running, st.Ready = false, false
			st.Restarts++
			st.LastExit = &exitInfo{Code: code, Reason: reason, Started: started, Finished: time.Now()}
			st.BackingOff = backoff
		})
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, backoffMax)
	}
}

// runOnce starts the process and waits until it exits or ctx ends (then stops it).
func (s *supervisor) runOnce(ctx context.Context) (code int, reason string, err error) {
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return -1, "Error", err
	}
	defer logf.Close()
	cmd := exec.Command(s.binary, s.launch.Args...)
	cmd.Dir = s.root()
	cmd.Env = s.launch.Env
	// kwok serves the file to `kubectl logs` and reads it as a container runtime writes
	// one (CRI format: time, stream, tag, line).
	var mu sync.Mutex
	cmd.Stdout, cmd.Stderr = &criWriter{w: logf, stream: "stdout", mu: &mu}, &criWriter{w: logf, stream: "stderr", mu: &mu}
	// The process dies with the controller, and signals reach its whole group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return -1, "StartError", err
	}
	s.mu.Lock()
	s.pid = cmd.Process.Pid
	s.mu.Unlock()
	// Tests find the process here (to kill or freeze it).
	_ = os.WriteFile(filepath.Join(s.dir, "pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
	s.set(func(st *procState) {
		st.Running, st.Ready, st.Started, st.BackingOff = true, false, time.Now(), 0
	})
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	probeCtx, stopProbe := context.WithCancel(ctx)
	defer stopProbe()
	go s.probe(probeCtx)

	select {
	case err := <-exited:
		stopProbe()
		code, reason := exitCode(cmd, err)
		return code, reason, nil
	case <-ctx.Done():
		stopProbe()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(s.grace):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		s.set(func(st *procState) { st.Running, st.Ready = false, false })
		return 0, "Completed", nil
	}
}

func exitCode(cmd *exec.Cmd, err error) (int, string) {
	st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ok && st.Signaled() {
		sig := st.Signal()
		return 128 + int(sig), "Error: " + sig.String()
	}
	if err == nil {
		return 0, "Completed"
	}
	return cmd.ProcessState.ExitCode(), "Error"
}

// probe polls the readiness endpoint every 100 ms until it answers (up to a minute), then
// every second, as the pod's readinessProbe would (the probe's own period is longer; tests
// should not wait for it): ready on the first success, not ready after FailureThreshold
// failures in a row.
func (s *supervisor) probe(ctx context.Context) {
	l := s.launch
	if l.ProbePath == "" {
		s.set(func(st *procState) { st.Ready = true })
		return
	}
	addr, ok := l.Ports[l.ProbePort]
	if !ok {
		log.Printf("%s: the readiness probe's port %d is not one istiod listens on", s.key, l.ProbePort)
		return
	}
	url := "http://" + addr + l.ProbePath
	client := &http.Client{Timeout: time.Second}
	fails := int32(0)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		} else {
			// Until the first success the probes come quickly: istiod takes 1 to 3 s to be
			// ready here, and every install waits for it, so a 1 s period cost up to 1 s each.
			for i := 0; i < 600 && ctx.Err() == nil && !probeOnce(ctx, client, url); i++ {
				time.Sleep(100 * time.Millisecond)
			}
		}
		if probeOnce(ctx, client, url) {
			fails = 0
			s.set(func(st *procState) { st.Ready = true })
			continue
		}
		if fails++; fails >= l.FailureThreshold {
			s.set(func(st *procState) { st.Ready = false })
		}
	}
}

func probeOnce(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 400
}

// writeFiles lays the launch's volumes out under root, writing only what changed (istiod
// watches some of these files, as it would a kubelet's volume updates).
func writeFiles(root string, l *launch) error {
	for _, d := range l.Dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	for p, b := range l.Files {
		if err := writeIfChanged(filepath.Join(root, p), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func writeIfChanged(p string, b []byte, mode os.FileMode) error {
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, b) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.tmp.%d", p, os.Getpid())
	if err := os.WriteFile(tmp, b, mode); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// criWriter writes each line in the CRI log format: "<RFC3339Nano time> <stream> F <line>".
type criWriter struct {
	w      io.Writer
	stream string
	mu     *sync.Mutex
	part   []byte
}

func (c *criWriter) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(b)
	c.part = append(c.part, b...)
	for {
		i := bytes.IndexByte(c.part, '\n')
		if i < 0 {
			return n, nil
		}
		line := fmt.Sprintf("%s %s F %s\n", time.Now().UTC().Format(time.RFC3339Nano), c.stream, c.part[:i])
		if _, err := io.WriteString(c.w, line); err != nil {
			return n, err
		}
		c.part = c.part[i+1:]
	}
}

// lastLines is the end of a container log (at most n lines, without their CRI prefix), so
// that the bed's log says why an istiod exited after its pod's log is gone.
func lastLines(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "  (no log: " + err.Error() + ")"
	}
	defer f.Close()
	const tail = 8 << 10
	if st, err := f.Stat(); err == nil && st.Size() > tail {
		_, _ = f.Seek(st.Size()-tail, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	lines = lines[max(0, len(lines)-n):]
	for i, l := range lines {
		// time stream tag line
		if f := strings.SplitN(l, " ", 4); len(f) == 4 {
			l = f[3]
		}
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n")
}
