// Package historyfuzz holds the install record decoder's fuzz target, apart from history's
// own tests: a fuzz build instruments every package its test binary links, and history's
// tests import install, render and the cluster harness, which decoding a record never
// reaches. Here the binary links history and what history imports, nothing more.
package historyfuzz

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/istioctl-installer/istioctl/operator/bounded"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

// FuzzDecodeInstallRecord decodes arbitrary install record payloads (anyone who may write
// Secrets in the istio namespace can write one), JSON gzipped here (zip) or bytes as they
// are: an error says it is the record's and is a size refusal (bounded.ErrTooLarge) exactly
// when the payload unzips past bounded.MaxUnzipped; a record read encodes (Update writes
// back what List read) to a payload that reads and encodes the same; the rollback pick
// over it runs without a panic.
func FuzzDecodeInstallRecord(f *testing.F) {
	when := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	for _, r := range []*history.Record{
		{Number: 1, Revision: "default", Time: when, ToolVersion: "1.30.0", Action: history.ActionInstall, Outcome: history.Succeeded,
			Profile: "default", Spec: "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  profile: default\n",
			Objects: []history.ObjectRef{{Version: "v1", Kind: "ServiceAccount", Namespace: "istio-system", Name: "istiod"},
				{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "istio-system", Name: "istiod"}},
			Run: "me@host, pid 1", Digests: map[string]string{"docker.io/istio/pilot:1.30.0": "sha256:00"}},
		{Number: 3, Revision: "canary", Time: when.Add(time.Hour), Action: history.ActionRollback, Outcome: history.RolledBack,
			RollbackOf: 1, Description: "readiness: istiod not ready", ObjectsOmitted: 4, Trust: history.Sealed},
		{Number: 2, Revision: "default", Outcome: history.Interrupted},
	} {
		b, err := history.Encode(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
		f.Add(fixture.Gunzipped(f, b), true)
	}
	f.Add([]byte(`{"number":-1,"time":"0000-01-01T00:00:00-23:59","objects":[{}],"digests":{"":""}}`), true)
	f.Add([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00"), false)
	f.Fuzz(func(t *testing.T, data []byte, zip bool) {
		payload := data
		if zip {
			payload = fixture.Gzipped(t, data, 0, 0)
		}
		r, err := history.Decode(payload)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "decoding install record: ") {
				t.Fatalf("error does not say it is the record's: %v", err)
			}
			if tooLarge := errors.Is(err, bounded.ErrTooLarge); tooLarge != past(payload) {
				t.Fatalf("refused for its size: %v; unzips past the limit: %v (%v)", tooLarge, !tooLarge, err)
			}
			return
		}
		again, err := history.Encode(r)
		if errors.Is(err, history.ErrTooLarge) {
			return
		}
		if err != nil {
			t.Fatalf("a record read does not encode: %v", err)
		}
		back, err := history.Decode(again)
		if err != nil {
			t.Fatalf("a record read encodes to one that does not read: %v", err)
		}
		twice, err := history.Encode(back)
		if err != nil || !bytes.Equal(fixture.Gunzipped(t, again), fixture.Gunzipped(t, twice)) {
			t.Fatalf("encoding is not stable (%v):\n%s\n%s", err, fixture.Gunzipped(t, again), fixture.Gunzipped(t, twice))
		}
		rs := []*history.Record{r, back}
		history.Sort(rs)
		history.LastSucceeded(rs)
		_, _ = history.Target(rs, 0)
		_, _ = history.Target(rs, r.Number)
	})
}

// past says payload is gzip that unzips to more than bounded.MaxUnzipped.
func past(payload []byte) bool {
	zr, err := gzip.NewReader(bytes.NewReader(payload))
	if err != nil {
		return false
	}
	n, _ := io.Copy(io.Discard, io.LimitReader(zr, bounded.MaxUnzipped+1))
	return n > bounded.MaxUnzipped
}
