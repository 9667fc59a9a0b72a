package cmd_test

import (
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// BenchmarkPrecheck times a whole `istioctl x precheck` (resolve, render, every check,
// report) against the local cluster: go test -run '^$' -bench Precheck ./pkg/cmd.
func BenchmarkPrecheck(b *testing.B) {
	c := cluster.Get(b)
	b.Setenv("HOME", b.TempDir())
	for i := 0; i < b.N; i++ {
		if r := (harness.Istioctl{T: b, Kubeconfig: c.Kubeconfig}).Run("x", "precheck", "-o", "json"); r.Err != nil {
			b.Fatalf("%v\n%s", r.Err, r.Stdout)
		}
	}
}
