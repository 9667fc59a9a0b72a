package spec

import (
	"regexp"
	"strings"
	"testing"
)

// TestPatternLoops: isTag and isGatewayName accept exactly what the patterns they replace
// match.
func TestPatternLoops(t *testing.T) {
	cases := []struct {
		name    string
		pattern string
		f       func(string) bool
	}{
		{"isTag", `^[\w][\w.-]{0,127}$`, isTag},
		{"isGatewayName", `^[a-z0-9.-]{1,254}$`, isGatewayName},
	}
	// Every string of up to 3 bytes over an alphabet with each class's edges, then long
	// strings around the length bounds, then a few whose tail or head alone is wrong.
	alphabet := []string{"a", "z", "A", "Z", "0", "9", "_", ".", "-", "/", ":", " ", "\n", "é", "\x00", "\xff"}
	inputs := []string{""}
	prev := []string{""}
	for n := 1; n <= 3; n++ {
		var next []string
		for _, p := range prev {
			for _, c := range alphabet {
				next = append(next, p+c)
			}
		}
		inputs = append(inputs, next...)
		prev = next
	}
	for _, n := range []int{126, 127, 128, 129, 253, 254, 255} {
		for _, c := range []string{"a", "A", "_", "-", "."} {
			inputs = append(inputs, strings.Repeat(c, n), "a"+strings.Repeat(c, n-1), strings.Repeat(c, n-1)+"\n")
		}
	}
	inputs = append(inputs, "1.30.0", "1.30.0-distroless", "istio-ingressgateway", "v1.30\n", "\n1.30", "latest ", "Gateway")
	matched := map[string]int{}
	for _, c := range cases {
		re := regexp.MustCompile(c.pattern)
		for _, in := range inputs {
			want := re.MatchString(in)
			if got := c.f(in); got != want {
				t.Errorf("%s(%q) = %v, %s matches: %v", c.name, in, got, c.pattern, want)
			}
			if want {
				matched[c.name]++
			}
		}
	}
	// Both outcomes must occur, or the comparison proves little.
	for _, c := range cases {
		if matched[c.name] == 0 || matched[c.name] == len(inputs) {
			t.Errorf("%s: %d of %d inputs match", c.name, matched[c.name], len(inputs))
		}
	}
}
