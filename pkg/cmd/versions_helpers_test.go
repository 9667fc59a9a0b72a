package cmd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// builtAt holds the binaries built at other versions, one per version and test binary.
var builtAt sync.Map

// istioctlAt builds the product at version (make build VERSION=... BIN=...), once per test
// binary, and returns a function running it against c: our build stamps its own version
// into what it installs, so an older "from" side is this tree built as that version.
func istioctlAt(t *testing.T, c *cluster.Cluster, version string) func(args ...string) string {
	t.Helper()
	v, _ := builtAt.LoadOrStore(version, &struct {
		once sync.Once
		bin  string
		err  error
		out  []byte
	}{})
	b := v.(*struct {
		once sync.Once
		bin  string
		err  error
		out  []byte
	})
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "istioctl-"+version+"-")
		if err != nil {
			b.err = err
			return
		}
		b.bin = filepath.Join(dir, "istioctl")
		cmd := exec.Command("make", "-s", "build", "VERSION="+version, "BIN="+b.bin)
		cmd.Dir = filepath.Join("..", "..")
		b.out, b.err = cmd.CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("make build VERSION=%s: %v\n%s", version, b.err, b.out)
	}
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command(b.bin, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("istioctl %s %s: %v\n%s", version, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}
