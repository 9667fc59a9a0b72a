package cmd_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/cmd"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// BenchmarkPrecheck times a whole `istioctl x precheck` (resolve, render, every check,
// report) against the local cluster: go test -run '^$' -bench Precheck ./pkg/cmd.
func BenchmarkPrecheck(b *testing.B) {
	c := cluster.Get(b)
	b.Setenv("HOME", b.TempDir())
	for i := 0; i < b.N; i++ {
		var out, errOut bytes.Buffer
		root := cmd.NewRootCommand(cmd.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		root.SetArgs([]string{"--kubeconfig", c.Kubeconfig, "x", "precheck", "-o", "json"})
		if err := root.ExecuteContext(context.Background()); err != nil {
			b.Fatalf("%v\n%s", err, out.String())
		}
	}
}
