package main

import (
	"errors"
	"io"
	"log"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/istioctl-installer/istioctl/hack/internal/loopback"
)

// backend is a process listener a Service port leads to.
type backend struct {
	sup  *supervisor
	addr string
}

// forwarders stand in for kube-proxy on the bed's loopback service range: each listens on
// a Service's cluster IP and port and carries every connection to a ready process behind
// it (the first in order), or closes it when none is ready, as a Service without ready
// endpoints refuses connections.
type forwarders struct {
	mu      sync.Mutex
	byAddr  map[string]*forwarder
	refused map[string]bool // addresses that could not be bound, said once
}

type forwarder struct {
	ln       net.Listener
	mu       sync.Mutex
	backends []backend
}

func newForwarders() *forwarders {
	return &forwarders{byAddr: map[string]*forwarder{}, refused: map[string]bool{}}
}

func (fs *forwarders) sync(want map[string][]backend) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for at, f := range fs.byAddr {
		if _, ok := want[at]; !ok {
			f.ln.Close()
			delete(fs.byAddr, at)
		}
	}
	var errs []error
	for at, bs := range want {
		f := fs.byAddr[at]
		if f == nil {
			if err := loopback.Addr(at); err != nil {
				errs = append(errs, err)
				continue
			}
			ln, err := net.Listen("tcp", at)
			if err != nil {
				if !fs.refused[at] {
					fs.refused[at] = true
					log.Printf("cannot listen on %s: %v%s", at, err, privilegedHint(err))
				}
				continue
			}
			delete(fs.refused, at)
			f = &forwarder{ln: ln}
			fs.byAddr[at] = f
			go f.serve()
		}
		f.mu.Lock()
		f.backends = bs
		f.mu.Unlock()
	}
	return errors.Join(errs...)
}

// privilegedHint says how to bind a port below 1024 without root: the webhooks' Services
// use 443, and the apiserver dials the cluster IP at that port.
func privilegedHint(err error) string {
	if errors.Is(err, syscall.EACCES) {
		return " (ports below 1024 need root, or once: sysctl -w net.ipv4.ip_unprivileged_port_start=443)"
	}
	return ""
}

func (fs *forwarders) closeAll() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for at, f := range fs.byAddr {
		f.ln.Close()
		delete(fs.byAddr, at)
	}
}

func (f *forwarder) pick() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range f.backends {
		if st := b.sup.snapshot(); st.Running && st.Ready {
			return b.addr
		}
	}
	return ""
}

func (f *forwarder) serve() {
	for {
		conn, err := f.ln.Accept()
		if err != nil {
			return // closed
		}
		go f.carry(conn)
	}
}

func (f *forwarder) carry(in net.Conn) {
	defer in.Close()
	addr := f.pick()
	if addr == "" {
		return // no ready endpoint
	}
	out, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return
	}
	defer out.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done
	<-done
}
