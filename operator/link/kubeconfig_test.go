package link

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
)

// jwt is a token whose payload carries claims (unsigned: only the apiserver verifies).
func jwt(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(claims)) + ".c2ln"
}

func TestEncodeIsUpstreamsShape(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  Type
		auth Auth
		tls  string
	}{
		{"remote-token", TypeRemote, Auth{Token: []byte("TOKEN")}, ""},
		{"remote-plugin", TypeRemote, Auth{PluginName: "gcp", PluginConfig: map[string]string{"a": "b"}}, "api.internal"},
		{"config", TypeConfig, Auth{Token: []byte("TOKEN")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kc, err := Kubeconfig("c1", "https://192.0.2.10:6443", tc.tls, []byte("CA"), tc.auth)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Encode(Secret(tc.typ, "c1", "istio-system", kc))
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/"+tc.name+".yaml", out)
		})
	}
}

func TestFromSecret(t *testing.T) {
	kc, err := Kubeconfig("c2", "https://192.0.2.10:6443", "", []byte("CA"), Auth{Token: []byte("TOKEN")})
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	s := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "istio-remote-secret-c2", "namespace": "istio-system", "annotations": map[string]any{"networking.istio.io/cluster": "c2"}},
		"data":     map[string]any{"c2": b64(kc), "c3": "not base64!"},
	}}
	links := FromSecret(s)
	if len(links) != 2 || links[0].ClusterID != "c2" || links[1].ClusterID != "c3" || links[0].Secret() != "istio-system/istio-remote-secret-c2" {
		t.Fatalf("links: %+v", links)
	}
	if _, err := links[0].Config(); err != nil || links[0].Server() != "https://192.0.2.10:6443" {
		t.Errorf("c2 decodes to %q: %v", links[0].Server(), err)
	}
	if _, err := links[1].Config(); err == nil || strings.Contains(err.Error(), "TOKEN") {
		t.Errorf("c3 holds no kubeconfig, got %v", err)
	}
	if !links[0].SameToken([]byte("TOKEN")) || links[0].SameToken([]byte("OTHER")) {
		t.Error("SameToken does not compare the token")
	}
	s.SetName("istio-kubeconfig")
	s.Object["data"] = map[string]any{"config": b64(kc)}
	if l := FromSecret(s); len(l) != 1 || l[0].Type != TypeConfig || l[0].ClusterID != "c2" {
		t.Errorf("config Secret: %+v", l)
	}
}

func TestMethods(t *testing.T) {
	for _, tc := range []struct {
		name    string
		user    clientcmdapi.AuthInfo
		want    string
		option  string
		probe   bool
		allowed []string
		refused bool
	}{
		{"token", clientcmdapi.AuthInfo{Token: "t"}, "bearer token", "", true, nil, false},
		{"cert data", clientcmdapi.AuthInfo{ClientCertificateData: []byte("c"), ClientKeyData: []byte("k")}, "client certificate", "", true, nil, false},
		{"oidc", clientcmdapi.AuthInfo{AuthProvider: &clientcmdapi.AuthProviderConfig{Name: "oidc"}}, "auth provider oidc", "", true, nil, false},
		{"gcp", clientcmdapi.AuthInfo{AuthProvider: &clientcmdapi.AuthProviderConfig{Name: "gcp"}}, "auth provider gcp", "gcp", false, nil, true},
		{"exec", clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "aws"}}, "exec plugin aws", "exec", false, nil, true},
		{"exec allowed", clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "aws"}}, "exec plugin aws", "exec", false, []string{"exec"}, false},
		{"token file", clientcmdapi.AuthInfo{TokenFile: "/t"}, "token file", "tokenFile", false, []string{"exec"}, true},
		{"cert file", clientcmdapi.AuthInfo{ClientCertificate: "/c", ClientKey: "/k"}, "client certificate file", "clientCertificate", false, nil, true},
		{"nothing", clientcmdapi.AuthInfo{}, "no credentials", "", false, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &clientcmdapi.Config{AuthInfos: map[string]*clientcmdapi.AuthInfo{"u": &tc.user}}
			m := Methods(cfg)
			if len(m) != 1 || m[0].Name != tc.want || m[0].Option != tc.option || m[0].Probe != tc.probe {
				t.Fatalf("Methods = %+v, want %s (option %q, probe %v)", m, tc.want, tc.option, tc.probe)
			}
			if got := len(Refused(m, tc.allowed)) > 0; got != tc.refused {
				t.Errorf("refused = %v, want %v", got, tc.refused)
			}
		})
	}
}

func TestExecLinkIsNeverRun(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran")
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"c": {Server: "https://192.0.2.10:6443"}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"c": {Exec: &clientcmdapi.ExecConfig{Command: "touch", Args: []string{ran}, APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}},
		Contexts:       map[string]*clientcmdapi.Context{"c": {Cluster: "c", AuthInfo: "c"}},
		CurrentContext: "c",
	}
	kc, err := clientcmd.Write(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := Link{ClusterID: "c", Namespace: "istio-system", Name: "x", kubeconfig: kc}
	if _, err := l.RESTConfig(time.Second); err == nil || !strings.Contains(err.Error(), "not probed") {
		t.Fatalf("an exec link must not be probed, got %v", err)
	}
	if p := l.Probe(t.Context(), nil, "istio-system"); p.Cause != "credentials" {
		t.Errorf("probe cause = %q (%v), want credentials", p.Cause, p.Err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the link's exec plugin ran")
	}
}

func TestTokenExpiry(t *testing.T) {
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name, token string
		ok          bool
	}{
		{"bound token", jwt(fmt.Sprintf(`{"exp":%d,"sub":"system:serviceaccount:istio-system:r"}`, exp.Unix())), true},
		{"legacy token", jwt(`{"iss":"kubernetes/serviceaccount","sub":"system:serviceaccount:istio-system:r"}`), false},
		{"not a jwt", "abc", false},
		{"bad payload", "a.!!!.c", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := TokenExpiry([]byte(tc.token))
			if ok != tc.ok || (ok && !got.Equal(exp)) {
				t.Errorf("TokenExpiry = %v, %v; want %v, %v", got, ok, exp, tc.ok)
			}
		})
	}
}

func TestLoopback(t *testing.T) {
	for server, want := range map[string]bool{
		"https://127.0.0.1:6443": true, "https://localhost:6443": true, "https://[::1]:6443": true,
		"https://127.64.0.1": true, "https://192.0.2.10:6443": false, "https://api.example.com": false, "": false,
	} {
		if got := Loopback(server); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", server, got, want)
		}
	}
}
