package main

import (
	"net"
	"strconv"
	"testing"
)

func TestParsePortRange(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{{"", true}, {"26500-26999", true}, {"5-5", true}, {"26999-26500", false}, {"26500", false}, {"a-b", false}, {"0-10", false}, {"1-70000", false}} {
		if _, err := parsePortRange(tc.in); (err == nil) != tc.ok {
			t.Errorf("parsePortRange(%q): %v", tc.in, err)
		}
	}
}

// The pool skips ports it gave out and ports something else listens on, gives freed ones
// back last, and says when the range is used up.
func TestPortPool(t *testing.T) {
	// Three ports in a row that are free now, the middle one then taken by a listener.
	var first int
	for p := 20000; p < 25000 && first == 0; p += 3 {
		if bindable(p) && bindable(p+1) && bindable(p+2) {
			first = p
		}
	}
	if first == 0 {
		t.Fatal("no three free ports in a row")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(first+1))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pool, err := parsePortRange(strconv.Itoa(first) + "-" + strconv.Itoa(first+2))
	if err != nil {
		t.Fatal(err)
	}
	a, err := pool.take("ns/a")
	if err != nil || a != first {
		t.Fatalf("first take: %d, %v; want %d", a, err, first)
	}
	b, err := pool.take("ns/b")
	if err != nil || b != first+2 {
		t.Fatalf("second take: %d, %v; want %d (%d has a listener)", b, err, first+2, first+1)
	}
	if p, err := pool.take("ns/c"); err == nil {
		t.Fatalf("a third take got %d from a used-up range", p)
	}
	pool.release("ns/a")
	if p, err := pool.take("ns/c"); err != nil || p != first {
		t.Fatalf("after a release: %d, %v; want %d", p, err, first)
	}
}
