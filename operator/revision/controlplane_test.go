package revision

import "testing"

func TestImageTag(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"docker.io/istio/pilot:1.30.0", "1.30.0"},
		{"localhost:5000/istio/pilot:1.30.0-distroless", "1.30.0-distroless"},
		{"localhost:5000/istio/pilot", "latest"},
		{"istio/pilot@sha256:abcd", "latest"},
		{"istio/pilot:1.2@sha256:abcd", "1.2"},
	} {
		if got := ImageTag(tc.in); got != tc.want {
			t.Errorf("ImageTag(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
