package spec

import "testing"

// TestCheckCIDRs: range lists are read as upstream reads them (netip.ParsePrefix on each
// comma-separated item, as written): host bits may be set; spaces and empty items are not
// CIDRs.
func TestCheckCIDRs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		bads int
	}{
		{"10.0.0.1/24", 0},
		{"10.0.0.1/24,172.16.5.4/12,fd00::1/64", 0},
		{"*", 0},
		{"", 0},
		{"10.0.0.0/8, 172.16.0.0/12", 1},
		{"10.0.0.1/24,", 1},
		{"10.0.0.1", 1},
		{"10.0.0.0/33,10.0.0.300/8", 2},
	} {
		if ps := checkCIDRs("p", tc.in); len(ps) != tc.bads {
			t.Errorf("checkCIDRs(%q): %v, want %d problems", tc.in, ps, tc.bads)
		}
	}
}
