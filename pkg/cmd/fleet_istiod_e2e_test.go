package cmd_test

import (
	"encoding/json"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// istiodLists waits until a primary's real istiod lists exactly the clusters given (the
// links tests).
var istiodLists = harness.IstiodLists

// sameAsIstiod checks that remote-clusters -o json in each primary prints what its istiod
// lists.
func sameAsIstiod(t *testing.T, l *linkBed, primaries ...string) {
	t.Helper()
	for _, p := range primaries {
		out, errOut, _ := l.istioctl(p, "remote-clusters", "-o", "json")
		var got struct{ Clusters []link.Row }
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("remote-clusters -o json in %s: %v\n%s\n%s", p, err, out, errOut)
		}
		harness.SameAsIstiod(t, l.member(p), got.Clusters)
	}
}
