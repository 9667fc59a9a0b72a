package main

import (
	"fmt"
	"net/netip"
	"strings"
)

// pool hands out the addresses of one range, each to one Service key at a time. It is used
// by the controller's single worker only, so it needs no lock.
type pool struct {
	addrs []netip.Addr
	byKey map[string]netip.Addr
	owner map[netip.Addr]string
}

// parsePool reads "FIRST-LAST" (IPv4, inclusive, at most 256 addresses) and keeps the
// range inside 192.0.2.0/24: these addresses end up in Service status, and TEST-NET-1 is
// reserved for documentation, so they can never be someone's real address.
func parsePool(s string) (*pool, error) {
	first, last, ok := strings.Cut(s, "-")
	if !ok {
		return nil, fmt.Errorf("pool %q: want FIRST-LAST, e.g. 192.0.2.1-192.0.2.30", s)
	}
	a, err := netip.ParseAddr(first)
	if err != nil {
		return nil, fmt.Errorf("pool %q: %w", s, err)
	}
	b, err := netip.ParseAddr(last)
	if err != nil {
		return nil, fmt.Errorf("pool %q: %w", s, err)
	}
	testNet := netip.MustParsePrefix("192.0.2.0/24")
	if !testNet.Contains(a) || !testNet.Contains(b) {
		return nil, fmt.Errorf("pool %q: both ends must be in %s (TEST-NET-1)", s, testNet)
	}
	if b.Less(a) {
		return nil, fmt.Errorf("pool %q: the last address comes before the first", s)
	}
	p := &pool{byKey: map[string]netip.Addr{}, owner: map[netip.Addr]string{}}
	for ip := a; ; ip = ip.Next() {
		p.addrs = append(p.addrs, ip)
		if ip == b {
			break
		}
	}
	return p, nil
}

// contains reports whether ip is one of the pool's addresses.
func (p *pool) contains(ip netip.Addr) bool {
	return len(p.addrs) > 0 && !ip.Less(p.addrs[0]) && !p.addrs[len(p.addrs)-1].Less(ip)
}

// adopt records that key already holds ip (found in its status, e.g. after a restart). It
// returns false when another key holds ip: the caller then gives key a new one.
func (p *pool) adopt(key string, ip netip.Addr) bool {
	if o, ok := p.owner[ip]; ok && o != key {
		return false
	}
	if old, ok := p.byKey[key]; ok && old != ip {
		delete(p.owner, old)
	}
	p.byKey[key], p.owner[ip] = ip, key
	return true
}

// assign returns key's address, giving it the lowest free one if it has none.
func (p *pool) assign(key string) (netip.Addr, error) {
	if ip, ok := p.byKey[key]; ok {
		return ip, nil
	}
	for _, ip := range p.addrs {
		if _, used := p.owner[ip]; !used {
			p.byKey[key], p.owner[ip] = ip, key
			return ip, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("all %d addresses from %s to %s are taken: delete a LoadBalancer Service",
		len(p.addrs), p.addrs[0], p.addrs[len(p.addrs)-1])
}

// release frees key's address, if it has one.
func (p *pool) release(key string) {
	if ip, ok := p.byKey[key]; ok {
		delete(p.owner, ip)
		delete(p.byKey, key)
	}
}
