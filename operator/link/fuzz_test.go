package link

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// FuzzLinkKubeconfig reads arbitrary bytes as the kubeconfig under an arbitrary key of a
// link Secret (anyone who may write Secrets in the istio namespace can write one): an
// error names the key and the Secret and quotes no token of the input; a kubeconfig
// that decodes, written back out as create-remote-secret writes one, decodes to the same
// server, credentials and auth methods.
func FuzzLinkKubeconfig(f *testing.F) {
	goldens, _ := filepath.Glob("testdata/*.yaml")
	for _, g := range goldens {
		data, err := os.ReadFile(g)
		if err != nil {
			f.Fatal(err)
		}
		var s corev1.Secret
		if err := yaml.Unmarshal(data, &s); err != nil {
			f.Fatalf("%s: %v", g, err)
		}
		for k, v := range s.StringData {
			f.Add(k, []byte(v))
		}
	}
	if len(goldens) == 0 {
		f.Fatal("no goldens under testdata/")
	}
	f.Add("c1", []byte("apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    exec: {command: rm, apiVersion: client.authentication.k8s.io/v1}\n"))
	f.Add("c1", []byte(`{"current-context":"x","contexts":[{"name":"x","context":{"cluster":"y","user":"SECRET-TOKEN"}}]}`))
	f.Fuzz(func(t *testing.T, key string, kubeconfig []byte) {
		s := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "istio-remote-secret-x", "namespace": "istio-system"},
			"data":     map[string]any{key: base64.StdEncoding.EncodeToString(kubeconfig)},
		}}
		links := FromSecret(s)
		if len(links) != 1 || links[0].ClusterID != key {
			t.Fatalf("one key gave links %+v", links)
		}
		l := links[0]
		cfg, err := l.Config()
		if err != nil {
			msg := err.Error()
			if !strings.Contains(msg, "key "+key+" ") || !strings.Contains(msg, "Secret istio-system/istio-remote-secret-x") {
				t.Fatalf("error does not name the key and the Secret: %v", err)
			}
			// What the kubeconfig loader could read of it: none of its tokens may show.
			if loose, lerr := clientcmd.Load(kubeconfig); lerr == nil {
				for _, u := range loose.AuthInfos {
					if u != nil && len(u.Token) >= 8 && strings.Contains(msg, u.Token) {
						t.Fatalf("error quotes a token: %v", err)
					}
				}
			}
			return
		}
		methods := Methods(cfg)
		l.Expiry()
		out, err := clientcmd.Write(*cfg)
		if err != nil {
			t.Fatalf("a kubeconfig read does not write: %v", err)
		}
		back := FromSecret(&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "istio-remote-secret-x", "namespace": "istio-system"},
			"data":     map[string]any{key: base64.StdEncoding.EncodeToString(out)},
		}})[0]
		cfg2, err := back.Config()
		if err != nil {
			t.Fatalf("a kubeconfig read, written back, does not read: %v\n%s", err, out)
		}
		if l.Server() != back.Server() || !reflect.DeepEqual(methods, Methods(cfg2)) || !reflect.DeepEqual(token(cfg), token(cfg2)) {
			t.Fatalf("round trip changed the link: server %q -> %q, methods %v -> %v", l.Server(), back.Server(), methods, Methods(cfg2))
		}
	})
}
