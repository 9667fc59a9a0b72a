package helmrelease

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const manifest = `---
# Source: istiod/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: istiod
  namespace: istio-system
---
# Source: istiod/templates/clusterrole.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: istiod-clusterrole-istio-system
---
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: istio
`

// payload encodes a release as Helm's storage does: JSON, gzipped (or not), base64 text.
func payload(t *testing.T, rel map[string]any, zip bool) string {
	t.Helper()
	data, err := json.Marshal(rel)
	if err != nil {
		t.Fatal(err)
	}
	if zip {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		_, _ = w.Write(data)
		_ = w.Close()
		data = b.Bytes()
	}
	return base64.StdEncoding.EncodeToString(data)
}

// release is istiod's release as Helm records it, with values it must never read.
func release() map[string]any {
	return map[string]any{
		"name": "istiod", "namespace": "istio-system", "version": 3,
		"info":     map[string]any{"status": "deployed"},
		"chart":    map[string]any{"metadata": map[string]any{"name": "istiod", "version": "1.0.0"}},
		"config":   map[string]any{"secret": "never read"},
		"manifest": manifest,
	}
}

func TestDecode(t *testing.T) {
	rel := release()
	want := []Object{
		{APIVersion: "v1", Kind: "ServiceAccount", Namespace: "istio-system", Name: "istiod"},
		{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "istiod-clusterrole-istio-system"},
		{APIVersion: "v1", Kind: "ConfigMap", Name: "istio"},
	}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
	}{
		{"secret, gzipped", recordOf(t, "Secret", base64.StdEncoding.EncodeToString([]byte(payload(t, rel, true))))},
		{"secret, plain JSON", recordOf(t, "Secret", base64.StdEncoding.EncodeToString([]byte(payload(t, rel, false))))},
		{"configmap", recordOf(t, "ConfigMap", payload(t, rel, true))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := decodeRecord(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if r.Version != 3 || r.Info.Status != "deployed" || r.Chart.Metadata.Name != "istiod" {
				t.Errorf("decoded %+v", r)
			}
			objs, err := ManifestObjects(r.Manifest)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(objs, want) {
				t.Errorf("objects %+v, want %+v", objs, want)
			}
		})
	}
}

func recordOf(t *testing.T, kind, data string) *unstructured.Unstructured {
	t.Helper()
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind,
		"metadata": map[string]any{"name": "sh.helm.release.v1.istiod.v3", "namespace": "istio-system"},
		"data":     map[string]any{"release": data}}}
	return o
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"not base64", base64.StdEncoding.EncodeToString([]byte("%%%")), "not base64"},
		{"not gzip", base64.StdEncoding.EncodeToString([]byte(base64.StdEncoding.EncodeToString([]byte{0x1f, 0x8b, 0x08, 0}))), "does not unzip"},
		{"not JSON", base64.StdEncoding.EncodeToString([]byte(base64.StdEncoding.EncodeToString([]byte("{")))), "not Helm's release JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeRecord(recordOf(t, "Secret", tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	if _, err := ManifestObjects("kind: [unclosed"); err == nil {
		t.Error("a manifest that is not YAML decoded")
	}
}
