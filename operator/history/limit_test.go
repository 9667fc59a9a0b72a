package history_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/bounded"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

// TestUnzipLimit: a record whose JSON unzips past bounded.MaxUnzipped is refused, not cut
// at the limit: a whole record followed by padding past it (which a cut would have read as
// the record) fails as too large, and listing it names its Secret and the limit, having
// allocated less than twice the limit to read it.
func TestUnzipLimit(t *testing.T) {
	z := fixture.Gzipped(t, []byte(`{"number":7,"revision":"default","outcome":"succeeded"}`), ' ', bounded.MaxUnzipped)
	if _, err := history.Decode(z); !errors.Is(err, bounded.ErrTooLarge) {
		t.Fatalf("Decode(a record padded past the limit) = %v, want ErrTooLarge", err)
	}

	f, s := sealedStore(t, 1)
	forge(t, f, secretOf(t, f, "istioctl-install-default-v1"), "istioctl-install-default-v7", base64.StdEncoding.EncodeToString(z))
	var err error
	alloc := fixture.Allocated(func() { _, err = s.List(context.Background(), "") })
	if !errors.Is(err, bounded.ErrTooLarge) {
		t.Fatalf("List = %v, want ErrTooLarge", err)
	}
	for _, want := range []string{"Secret/istio-system/istioctl-install-default-v7", "64 MiB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\ndoes not name %q", err, want)
		}
	}
	if alloc >= 2*bounded.MaxUnzipped {
		t.Errorf("allocated %d bytes listing the records, want under %d", alloc, 2*bounded.MaxUnzipped)
	}
	t.Logf("a %d KiB record refused having allocated %.1f MiB (limit %d MiB): %v", len(z)>>10, float64(alloc)/(1<<20), bounded.MaxUnzipped>>20, err)
}
