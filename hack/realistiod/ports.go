package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
)

// portPool hands out the loopback ports istiods listen on, from a range of the cluster's
// own (up.sh gives each cluster the upper half of its port block). A port the kernel chose
// (127.0.0.1:0) comes from the ephemeral range: in the second or two before istiod binds
// it, any client's outgoing connection may take it as its source port, and istiod, always
// restarted with the same ports, then crash-loops for as long as that connection lives.
// Ports below the ephemeral range are never taken that way, and the pool never gives one
// port to two processes of this cluster (other clusters have other blocks).
type portPool struct {
	first, last int

	mu   sync.Mutex
	next int
	held map[int]string // port -> the pod holding it
}

// parsePortRange reads "FIRST-LAST"; "" is no pool (the kernel chooses, as before).
func parsePortRange(s string) (*portPool, error) {
	if s == "" {
		return nil, nil
	}
	a, b, ok := strings.Cut(s, "-")
	first, err1 := strconv.Atoi(a)
	last, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || first < 1 || last > 65535 || first > last {
		return nil, fmt.Errorf("-ports=%q: want FIRST-LAST, two ports in order", s)
	}
	return &portPool{first: first, last: last, next: first, held: map[int]string{}}, nil
}

// take gives owner the next port of the range that no process of ours holds and nothing
// else listens on, going round the range so a port freed last is taken again last.
func (p *portPool) take(owner string) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range p.last - p.first + 1 {
		port := p.next
		if p.next++; p.next > p.last {
			p.next = p.first
		}
		if _, ok := p.held[port]; ok || !bindable(port) {
			continue
		}
		p.held[port] = owner
		return port, nil
	}
	return 0, fmt.Errorf("no free port left in %d-%d (%d held by istiods)", p.first, p.last, len(p.held))
}

// release returns owner's ports to the pool.
func (p *portPool) release(owner string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for port, o := range p.held {
		if o == owner {
			delete(p.held, port)
		}
	}
}

func bindable(port int) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = ln.Close()
	return true
}
