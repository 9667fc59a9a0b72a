// Package loopback holds the one safety rule of the test bed's own controllers (fakelb,
// realistiod): they talk to a local apiserver only, never to a real cluster.
package loopback

import (
	"fmt"
	"net"
	"net/url"
)

// APIServer refuses any API server URL whose host is not a loopback IP: pointed at a real
// cluster, a bed controller would overwrite what that cluster's own controllers write.
func APIServer(host string) error {
	u, err := url.Parse(host)
	if err != nil {
		return fmt.Errorf("API server %q: %w", host, err)
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("API server %s is not on a loopback address: the bed's controllers only serve the local test bed", host)
	}
	return nil
}

// Addr refuses a host:port whose host is not a loopback IP.
func Addr(hostport string) error {
	h, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return fmt.Errorf("address %q: %w", hostport, err)
	}
	if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("address %s is not a loopback address: the bed never dials or binds anything else", hostport)
	}
	return nil
}
