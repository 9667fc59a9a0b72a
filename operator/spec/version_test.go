package spec

import (
	"fmt"
	"testing"
)

// TestBuildVersionIsDefaultTag: a build at another VERSION installs that version's images;
// a tag the user gives still wins.
func TestBuildVersionIsDefaultTag(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Version: "1.29.4"}, "1.29.4"},
		{Options{Version: "1.29.4", Sets: []string{"tag=1.30.1"}}, "1.30.1"},
		{Options{Version: "1.29.4", Sets: []string{"profile=demo"}}, "1.29.4"},
	} {
		res, err := Resolve(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(res.IOP.Spec.Tag); got != tc.want {
			t.Errorf("%+v: tag %s, want %s", tc.opts, got, tc.want)
		}
	}
}
