package helmrelease

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/bounded"
	"github.com/istioctl-installer/istioctl/pkg/testing/fakekube"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

// FuzzReadRelease reads arbitrary release JSON as a Helm release record (anyone who may
// write Secrets or ConfigMaps in a namespace can write one), gzipped or not, in a Secret
// or a ConfigMap, through Get: an error names the record and the release and is a size
// refusal (bounded.ErrTooLarge) exactly when the release unzips past bounded.MaxUnzipped;
// neither an error nor the release read quotes the release's values; a release read
// lists the objects its manifest does, each with a kind or a name.
func FuzzReadRelease(f *testing.F) {
	seed, err := json.Marshal(release())
	if err != nil {
		f.Fatal(err)
	}
	for _, kind := range []bool{true, false} {
		f.Add(seed, true, kind)
		f.Add(seed, false, kind)
	}
	f.Add([]byte(`{"version":"3","manifest":"kind: [unclosed","config":{"a":"never read"}}`), true, true)
	f.Add([]byte(`{"manifest":"---\n---\nkind: A\n---\nmetadata: {name: b}\n...\n"}`), false, false)
	f.Fuzz(func(t *testing.T, rel []byte, zip, secret bool) {
		data := rel
		if zip {
			data = fixture.Gzipped(t, rel, 0, 0)
		}
		text := base64.StdEncoding.EncodeToString(data)
		kind := "ConfigMap"
		if secret {
			kind = "Secret"
			text = base64.StdEncoding.EncodeToString([]byte(text)) // as the API gives a Secret's data
		}
		rec := recordOf(t, kind, text)
		rec.SetLabels(map[string]string{labelOwner: "helm", labelName: "istiod", "version": "3"})
		rec.Object["type"] = SecretType
		r, err := Get(context.Background(), fakekube.NewStore(rec).Client, "istio-system", "istiod")
		var said string
		switch {
		case err != nil:
			said = err.Error()
			if !strings.Contains(said, kind+"/istio-system/sh.helm.release.v1.istiod.v3, a record of Helm release istio-system/istiod") {
				t.Fatalf("error does not name the record and the release: %v", err)
			}
			if tooLarge := errors.Is(err, bounded.ErrTooLarge); tooLarge != past(data) {
				t.Fatalf("refused for its size: %v; unzips past the limit: %v (%v)", tooLarge, !tooLarge, err)
			}
		case r == nil:
			t.Fatal("a record of the release, and no release")
		default:
			said = r.Status + r.Chart
			for _, o := range r.Objects {
				if o.Kind == "" && o.Name == "" {
					t.Fatalf("an object without kind and name: %+v", r.Objects)
				}
				said += o.APIVersion + o.Kind + o.Namespace + o.Name
			}
		}
		for _, v := range values(rel) {
			if strings.Contains(said, v) {
				t.Fatalf("the release's value %q shows in %q", v, said)
			}
		}
	})
}

// values are the string values of at least 8 bytes under the release's "config" (its values).
func values(rel []byte) []string {
	var r struct {
		Config any `json:"config"`
	}
	if json.Unmarshal(rel, &r) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case string:
			if len(v) >= 8 {
				out = append(out, v)
			}
		}
	}
	walk(r.Config)
	return out
}

// past says the record's payload is gzip that unzips past the limit.
func past(payload []byte) bool {
	zr, err := gzip.NewReader(bytes.NewReader(payload))
	if !bytes.HasPrefix(payload, gzipMagic) || err != nil {
		return false
	}
	n, _ := io.Copy(io.Discard, io.LimitReader(zr, bounded.MaxUnzipped+1))
	return n > bounded.MaxUnzipped
}
