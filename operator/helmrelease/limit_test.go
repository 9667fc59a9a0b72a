package helmrelease

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/bounded"
	"github.com/istioctl-installer/istioctl/pkg/testing/fakekube"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

// TestUnzipLimit: a Helm release record whose release unzips past bounded.MaxUnzipped (a
// gzip bomb of 64 KiB in the Secret) is refused naming the Secret and the limit, having
// allocated less than twice the limit to read it.
func TestUnzipLimit(t *testing.T) {
	z := fixture.Gzipped(t, nil, 0, bounded.MaxUnzipped+1)
	// a Secret's data is base64 once more (recordOf: as the API gives it)
	rec := recordOf(t, "Secret", base64.StdEncoding.EncodeToString([]byte(base64.StdEncoding.EncodeToString(z))))
	rec.SetLabels(map[string]string{labelOwner: "helm", labelName: "istiod", "version": "3"})
	rec.Object["type"] = SecretType
	store := fakekube.NewStore(rec)

	var err error
	alloc := fixture.Allocated(func() { _, err = Get(context.Background(), store.Client, "istio-system", "istiod") })
	if !errors.Is(err, bounded.ErrTooLarge) {
		t.Fatalf("Get = %v, want ErrTooLarge", err)
	}
	for _, want := range []string{"Secret/istio-system/sh.helm.release.v1.istiod.v3", "64 MiB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\ndoes not name %q", err, want)
		}
	}
	if alloc >= 2*bounded.MaxUnzipped {
		t.Errorf("allocated %d bytes reading the record, want under %d", alloc, 2*bounded.MaxUnzipped)
	}
	t.Logf("a %d KiB gzip bomb refused having allocated %.1f MiB (limit %d MiB): %v", len(z)>>10, float64(alloc)/(1<<20), bounded.MaxUnzipped>>20, err)
}
