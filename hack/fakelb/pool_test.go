package main

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParsePool(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		n       int
		wantErr string
	}{
		{"192.0.2.1-192.0.2.30", 30, ""},
		{"192.0.2.7-192.0.2.7", 1, ""},
		{"192.0.2.0-192.0.2.255", 256, ""},
		{"192.0.2.1", 0, "want FIRST-LAST"},
		{"192.0.2.9-192.0.2.1", 0, "comes before"},
		{"10.0.0.1-10.0.0.9", 0, "TEST-NET-1"},
		{"192.0.2.1-192.0.3.1", 0, "TEST-NET-1"},
		{"192.0.2.x-192.0.2.3", 0, "ParseAddr"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			p, err := parsePool(tc.spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.addrs) != tc.n {
				t.Errorf("%d addresses, want %d", len(p.addrs), tc.n)
			}
		})
	}
}

func TestPoolAssignAdoptRelease(t *testing.T) {
	p, err := parsePool("192.0.2.1-192.0.2.3")
	if err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr
	// A Service that held .2 before a restart keeps it; new ones get the lowest free.
	if !p.adopt("ns/held", ip("192.0.2.2")) {
		t.Fatal("adopting a free address failed")
	}
	if p.adopt("ns/other", ip("192.0.2.2")) {
		t.Fatal("adopted an address another Service holds")
	}
	steps := []struct {
		op, key string
		want    string // address, or an error fragment
	}{
		{"assign", "ns/a", "192.0.2.1"},
		{"assign", "ns/a", "192.0.2.1"}, // again: the same one
		{"assign", "ns/b", "192.0.2.3"},
		{"assign", "ns/c", "all 3 addresses"},
		{"release", "ns/a", ""},
		{"assign", "ns/c", "192.0.2.1"},
		{"release", "ns/unknown", ""},
	}
	for i, s := range steps {
		if s.op == "release" {
			p.release(s.key)
			continue
		}
		got, err := p.assign(s.key)
		if err != nil {
			if !strings.Contains(err.Error(), s.want) {
				t.Fatalf("step %d: %v, want %s", i, err, s.want)
			}
			continue
		}
		if got.String() != s.want {
			t.Fatalf("step %d: %s got %s, want %s", i, s.key, got, s.want)
		}
	}
	if !p.contains(ip("192.0.2.3")) || p.contains(ip("192.0.2.4")) || p.contains(ip("192.0.2.0")) {
		t.Error("contains disagrees with the range 192.0.2.1-192.0.2.3")
	}
}
