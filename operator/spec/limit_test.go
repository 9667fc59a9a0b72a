package spec_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/bounded"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// endless is standard input that never ends, counting what it gave.
type endless struct{ read int64 }

func (e *endless) Read(p []byte) (int, error) {
	e.read += int64(len(p))
	return len(p), nil
}

// TestInputSizeLimit: a 100 MiB -f file (sparse: nothing written to disk) and 100 MiB on
// standard input are each refused as a problem naming the input and bounded.MaxFile, having
// read at most MaxFile+1 bytes of it.
func TestInputSizeLimit(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	in := &endless{}
	for _, tc := range []struct {
		name string
		opts spec.Options
		want []string
	}{
		{"-f of 100 MiB", spec.Options{Files: []string{big}}, []string{big + ": cannot read: " + big + " is larger than 4 MiB"}},
		{"100 MiB on standard input", spec.Options{Files: []string{"-"}, Stdin: io.LimitReader(in, 100<<20)}, []string{"<stdin>: cannot read: standard input is larger than 4 MiB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := spec.Resolve(tc.opts)
			var ps v1alpha1.Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Resolve: %v, want problems", err)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%v\ndoes not say %q", err, want)
				}
			}
		})
	}
	if in.read > bounded.MaxFile+1 {
		t.Errorf("read %d bytes of standard input, want at most %d", in.read, bounded.MaxFile+1)
	}
}
