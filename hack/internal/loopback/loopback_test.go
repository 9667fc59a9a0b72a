package loopback

import "testing"

func TestAPIServer(t *testing.T) {
	for host, ok := range map[string]bool{
		"https://127.0.0.1:26443": true,
		"https://[::1]:6443":      true,
		"https://10.0.0.1:6443":   false,
		"https://example.com":     false,
		"https://localhost:6443":  false, // a name could resolve anywhere
	} {
		if err := APIServer(host); (err == nil) != ok {
			t.Errorf("APIServer(%s) = %v, want ok=%v", host, err, ok)
		}
	}
}

func TestAddr(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.64.0.10:443": true,
		"127.0.0.1:0":     true,
		"10.96.0.1:443":   false,
		"192.0.2.1:80":    false,
		"localhost:80":    false,
		"127.0.0.1":       false, // no port
	} {
		if err := Addr(addr); (err == nil) != ok {
			t.Errorf("Addr(%s) = %v, want ok=%v", addr, err, ok)
		}
	}
}
