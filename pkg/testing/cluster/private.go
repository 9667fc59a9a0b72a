package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StartPrivate starts a control plane for this test alone (hack/kube/up.sh with its own
// state directory, on its own ports) and stops it when the test ends. A test that breaks
// the control plane on purpose (KillAPIServer) needs one: the shared cluster serves the
// other tests. It costs a cluster start (about 6 s) and never uses ISTIOCTL_TEST_KUBECONFIG.
func StartPrivate(t testing.TB) *Cluster {
	t.Helper()
	declare(t, needPrivate)
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "istioctl-private-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{root: root, state: filepath.Join(dir, "state")}
	if err := c.start(); err != nil {
		t.Fatalf("private control plane: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			// A failed test's cluster keeps its logs (every component's, istiod's) to look at.
			if err := c.keepLogs(t); err != nil {
				t.Logf("keeping the private control plane's logs: %v", err)
			}
		}
		if err := c.stop(); err != nil {
			t.Errorf("stopping the private control plane: %v", err)
		}
	})
	c.Kubeconfig = filepath.Join(c.state, "kubeconfig")
	if err := c.connect(); err != nil {
		t.Fatal(err)
	}
	return c
}

// recordedPID reads a component's pid and binary as up.sh recorded them.
func (c *Cluster) recordedPID(component string) (int, string, error) {
	b, err := os.ReadFile(filepath.Join(c.stateDir(), "pids", component+".pid"))
	if err != nil {
		return 0, "", err
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return 0, "", fmt.Errorf("%s.pid: %q", component, b)
	}
	pid, err := strconv.Atoi(fields[0])
	return pid, fields[1], err
}

// proc is a component process RestartComponent started: exited closes once it has exited
// and been reaped.
type proc struct {
	pid    int
	exited chan struct{}
}

// KillAPIServer SIGKILLs the kube-apiserver of a private cluster (etcd, the controllers and
// kwok keep running) and returns once it is gone; RestartAPIServer starts it again with the
// same command line.
func (c *Cluster) KillAPIServer(t testing.TB) { t.Helper(); c.KillComponent(t, "kube-apiserver") }

// RestartAPIServer starts the kube-apiserver KillAPIServer killed and waits until it is
// ready.
func (c *Cluster) RestartAPIServer(t testing.TB) {
	t.Helper()
	exited := c.RestartComponent(t, "kube-apiserver")
	if err := c.waitReady(90*time.Second, exited); err != nil {
		t.Fatalf("the restarted kube-apiserver: %v\n%s", err, c.LogTail("kube-apiserver", 20))
	}
}

// KillComponent SIGKILLs one process up.sh started (kube-apiserver, kube-controller-manager,
// kube-scheduler, kwok, etcd) in a private cluster, remembering its command line, and
// returns once it is gone.
func (c *Cluster) KillComponent(t testing.TB, component string) {
	t.Helper()
	if c.state == "" {
		t.Fatal("killing a component needs a cluster of its own: use cluster.StartPrivate")
	}
	pid, exe, err := c.recordedPID(component)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); got != exe {
		t.Fatalf("pid %d is not the kube-apiserver up.sh started (%s, not %s)", pid, got, exe)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	if c.killedArgs == nil {
		c.killedArgs = map[string][]string{}
	}
	c.killedArgs[component] = strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Gone means reaped: a killed process's threads may still hold its sockets (the port)
	// while its main thread already shows as a zombie. One we restarted is our child, reaped
	// by RestartAPIServer's Wait; up.sh's first one is reaped by init.
	gone := func() bool {
		if p, ok := c.started[component]; ok && p.pid == pid {
			select {
			case <-p.exited:
				return true
			default:
				return false
			}
		}
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return os.IsNotExist(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !gone(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still there 10s after SIGKILL", component, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// RestartComponent starts the component KillComponent killed, with the same command line
// and log file, and records its pid where up.sh did (so down.sh and the watchdog stop it).
// The returned channel closes when the process exits.
func (c *Cluster) RestartComponent(t testing.TB, component string) <-chan struct{} {
	t.Helper()
	args := c.killedArgs[component]
	if len(args) == 0 {
		t.Fatalf("RestartComponent: %s was not killed", component)
	}
	_, exe, err := c.recordedPID(component)
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.OpenFile(filepath.Join(c.state, "logs", component+".log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: a signal to the test's group must not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }() // reap it when it is killed or stopped
	if c.started == nil {
		c.started = map[string]proc{}
	}
	c.started[component] = proc{pid: cmd.Process.Pid, exited: exited}
	pidFile := filepath.Join(c.state, "pids", component+".pid")
	if err := os.WriteFile(pidFile, fmt.Appendf(nil, "%d %s\n", cmd.Process.Pid, exe), 0o644); err != nil {
		t.Fatal(err)
	}
	return exited
}

// waitReady polls the apiserver's /readyz with the cluster CA, until exited closes.
func (c *Cluster) waitReady(timeout time.Duration, exited <-chan struct{}) error {
	ca, err := os.ReadFile(filepath.Join(c.state, "pki", "ca.crt"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		select {
		case <-exited:
			return fmt.Errorf("it exited: %v", last)
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.Config.Host+"/readyz", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("/readyz: %s", resp.Status)
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %s: %v", timeout, last)
}

// RestartAPIServerClients restarts the components that watch the apiserver
// (kube-controller-manager, kube-scheduler, kwok), as a control plane coming back from an
// outage would. Left running, their watches back off longer after each outage (the
// controller manager took 4 s, 11 s, then 25 s to see a new Deployment after three
// apiserver restarts here), which a test that restarts the apiserver again and again would
// wait out. kwok's node leases are handed over (deleted) first: a new kwok waits for the
// old one's to expire (40 s) before it runs pods.
func (c *Cluster) RestartAPIServerClients(t testing.TB) {
	t.Helper()
	clients := []string{"kube-controller-manager", "kube-scheduler", "kwok"}
	// The real istiod's kubelet too (its processes die with it and start again).
	if _, err := os.Stat(filepath.Join(c.state, "pids", "realistiod.pid")); err == nil {
		clients = append(clients, "realistiod")
	}
	for _, name := range clients {
		c.KillComponent(t, name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Kube.CoordinationV1().Leases("kube-node-lease").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("handing kwok's node leases over: %v", err)
	}
	for _, name := range clients {
		c.RestartComponent(t, name)
	}
}

// keepLogs copies the cluster's logs (and realistiod's processes' files) out of its state
// directory, which stopping it removes, and says where.
func (c *Cluster) keepLogs(t testing.TB) error {
	dir, err := os.MkdirTemp("", "istioctl-failed-cluster-")
	if err != nil {
		return err
	}
	for _, sub := range []string{"logs", "realistiod"} {
		if _, err := os.Stat(filepath.Join(c.state, sub)); err != nil {
			continue
		}
		if out, err := exec.Command("cp", "-r", filepath.Join(c.state, sub), dir).CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
	}
	t.Logf("the failed test's cluster logs are kept in %s", dir)
	return nil
}
