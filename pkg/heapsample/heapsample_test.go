package heapsample

import "testing"

func TestProfiling(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"manifest", "generate"}, false},
		{[]string{"manifest", "generate", "--memprofile", "m.prof"}, true},
		{[]string{"--memprofile=m.prof", "version"}, true},
		{[]string{"install", "--cpuprofile", "c.prof"}, false},
		{[]string{"manifest", "generate", "--memprofilex"}, false},
		{[]string{"manifest", "generate", "--", "--memprofile"}, false},
	} {
		if got := profiling(tc.args); got != tc.want {
			t.Errorf("profiling(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
