package harness

import (
	"io"
	"net"
	"net/url"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// TCPProxy forwards a loopback port to an apiserver (TLS passes through): stopping it is,
// for the clients given it, that apiserver stopping; starting it again, on the same port,
// its restart.
type TCPProxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

// StoppableKubeconfig is kubeconfig with context's apiserver (the current context's for "")
// reached through a TCPProxy: stopping the proxy is, for the clients given it, an outage
// of that apiserver whose length the test sets, without a restart's own time in it.
func StoppableKubeconfig(t testing.TB, kubeconfig, context string) (string, *TCPProxy) {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if context == "" {
		context = cfg.CurrentContext
	}
	ctx, ok := cfg.Contexts[context]
	if !ok || cfg.Clusters[ctx.Cluster] == nil {
		t.Fatalf("%s: no context %q", kubeconfig, context)
	}
	cl := cfg.Clusters[ctx.Cluster]
	u, err := url.Parse(cl.Server)
	if err != nil {
		t.Fatal(err)
	}
	p := &TCPProxy{addr: "127.0.0.1:0", target: u.Host}
	p.Start(t)
	t.Cleanup(p.Stop)
	cl.Server = "https://" + p.addr
	if cl.TLSServerName == "" {
		cl.TLSServerName = u.Hostname()
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path, p
}

// Start opens the port (the same one again after Stop).
func (p *TCPProxy) Start(t testing.TB) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *TCPProxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, c, up)
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	_, _ = io.Copy(c, up)
	c.Close()
}

// Stop closes the port and every connection through it.
func (p *TCPProxy) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
