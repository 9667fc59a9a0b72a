package kubeflags

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
)

// kubectlNamed are the flags that carry kubectl's names and meaning.
var kubectlNamed = []string{
	"server", "token", "user", "cluster", "certificate-authority", "client-certificate", "client-key",
	"insecure-skip-tls-verify", "tls-server-name", "request-timeout", "context", "namespace", "as", "as-group", "as-uid", "kubeconfig",
}

// TestFlagsMatchCLIRuntime: the kubectl flags have cli-runtime's names and types, and the
// ones new to istioctl its help text (the upstream istioctl ones keep upstream's words).
func TestFlagsMatchCLIRuntime(t *testing.T) {
	ours := pflag.NewFlagSet("ours", pflag.ContinueOnError)
	(&Flags{}).AddFlags(ours)
	theirs := pflag.NewFlagSet("kubectl", pflag.ContinueOnError)
	genericclioptions.NewConfigFlags(true).AddFlags(theirs)
	sameHelp := map[string]bool{"server": true, "token": true, "user": true, "cluster": true, "certificate-authority": true,
		"client-certificate": true, "client-key": true, "insecure-skip-tls-verify": true, "tls-server-name": true, "request-timeout": true}
	for _, name := range kubectlNamed {
		o, k := ours.Lookup(name), theirs.Lookup(name)
		if o == nil || k == nil {
			t.Errorf("--%s: ours %v, cli-runtime's %v", name, o != nil, k != nil)
			continue
		}
		if o.Value.Type() != k.Value.Type() || o.DefValue != k.DefValue {
			t.Errorf("--%s: type %s default %q, cli-runtime's %s %q", name, o.Value.Type(), o.DefValue, k.Value.Type(), k.DefValue)
		}
		if sameHelp[name] && o.Usage != k.Usage {
			t.Errorf("--%s help:\n ours %q\n cli-runtime's %q", name, o.Usage, k.Usage)
		}
	}
	if f := ours.Lookup("server"); f.Shorthand != "" {
		t.Errorf("--server has -%s: -s is --set's", f.Shorthand)
	}
}

const kubeconfig = `apiVersion: v1
kind: Config
current-context: one
clusters:
- name: c1
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: CA}
- name: c2
  cluster: {server: "https://127.0.0.2:6443", insecure-skip-tls-verify: true}
users:
- name: u1
  user: {token: token-one}
- name: u2
  user: {client-certificate: CERT, client-key: KEY}
contexts:
- name: one
  context: {cluster: c1, user: u1, namespace: ns-one}
- name: two
  context: {cluster: c2, user: u2}
`

// TestSameConfigAsKubectl: each set of flags gives the rest.Config cli-runtime's ConfigFlags
// gives for the same flags and kubeconfig (what kubectl would connect with).
func TestSameConfigAsKubectl(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"CA", "CERT", "KEY", "ca2.pem", "cert2.pem", "key2.pem"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "config")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(kubeconfig,
		"CA", filepath.Join(dir, "CA")), "CERT", filepath.Join(dir, "CERT")), "KEY", filepath.Join(dir, "KEY"))), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	for _, args := range [][]string{
		nil,
		{"--context", "two"},
		{"--user", "u2"},
		{"--cluster", "c2"},
		{"--server", "https://127.0.0.9:1234"},
		{"--token", "other-token"},
		{"--context", "two", "--token", "other-token"},
		{"--certificate-authority", filepath.Join(dir, "ca2.pem")},
		{"--client-certificate", filepath.Join(dir, "cert2.pem"), "--client-key", filepath.Join(dir, "key2.pem")},
		{"--insecure-skip-tls-verify", "--certificate-authority", ""},
		{"--tls-server-name", "kubernetes.default"},
		{"--request-timeout", "7"},
		{"--request-timeout", "2m"},
		{"--as", "alice", "--as-group", "g1", "--as-group", "g2", "--as-uid", "42"},
		{"-n", "other"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ours, err := parse(args)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ours.RESTConfig()
			if err != nil {
				t.Fatal(err)
			}
			fs := pflag.NewFlagSet("kubectl", pflag.ContinueOnError)
			k := genericclioptions.NewConfigFlags(true)
			k.AddFlags(fs)
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			want, err := k.ToRESTConfig()
			if err != nil {
				t.Fatal(err)
			}
			if !ours.RequestTimeout.Given() {
				want.Timeout = DefaultTimeout // ours: --kubeclient-timeout's default
			}
			if g, w := connection(got), connection(want); !reflect.DeepEqual(g, w) {
				t.Errorf("got  %+v\nwant %+v", g, w)
			}
			wantNS, _, _ := k.ToRawKubeConfigLoader().Namespace()
			if ns := ours.CurrentNamespace(); ns != wantNS {
				t.Errorf("namespace %q, kubectl's %q", ns, wantNS)
			}
		})
	}
	ours, _ := parse(nil)
	if got := ours.Contexts(); !reflect.DeepEqual(got, []string{"one", "two"}) {
		t.Errorf("contexts %v", got)
	}
}

func parse(args []string) (*Flags, error) {
	f := &Flags{}
	fs := pflag.NewFlagSet("ours", pflag.ContinueOnError)
	f.AddFlags(fs)
	return f, fs.Parse(args)
}

// connection is what of a rest.Config decides where and as whom requests go.
func connection(c *rest.Config) rest.Config {
	return rest.Config{
		Host: c.Host, BearerToken: c.BearerToken, Impersonate: c.Impersonate, Timeout: c.Timeout,
		TLSClientConfig: rest.TLSClientConfig{Insecure: c.Insecure, ServerName: c.ServerName, CAFile: c.CAFile,
			CertFile: c.CertFile, KeyFile: c.KeyFile},
	}
}

// TestNoKubeconfig: --server, --token and --certificate-authority alone connect, with no
// kubeconfig anywhere; without --server the error says what to set.
func TestNoKubeconfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	ca := filepath.Join(home, "ca.crt")
	if err := os.WriteFile(ca, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := parse([]string{"--server", "https://127.0.0.1:6443", "--token", "secret-token", "--certificate-authority", ca})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := f.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:6443" || cfg.BearerToken != "secret-token" || cfg.CAFile != ca || cfg.Timeout != DefaultTimeout {
		t.Errorf("got %s", cfg)
	}
	if strings.Contains(cfg.String(), "secret-token") {
		t.Errorf("rest.Config prints the token: %s", cfg)
	}
	if ns := f.CurrentNamespace(); ns != "default" {
		t.Errorf("namespace %q", ns)
	}
	f, _ = parse([]string{"--token", "secret-token"})
	_, err = f.RESTConfig()
	if err == nil || !strings.Contains(err.Error(), "--server") || strings.Contains(err.Error(), "secret-token") {
		t.Errorf("without --server: %v", err)
	}
}

func TestRequestTimeout(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{nil, DefaultTimeout},
		{[]string{"--kubeclient-timeout", "3s"}, 3 * time.Second},
		{[]string{"--request-timeout", "5"}, 5 * time.Second},
		{[]string{"--request-timeout", "0"}, 0},
		{[]string{"--kubeclient-timeout", "3s", "--request-timeout", "1m"}, time.Minute},
		{[]string{"--request-timeout", "1m", "--kubeclient-timeout", "3s"}, time.Minute},
	} {
		f, err := parse(append([]string{"--server", "https://127.0.0.1:1"}, tc.args...))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := f.RESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Timeout != tc.want {
			t.Errorf("%v: timeout %v, want %v", tc.args, cfg.Timeout, tc.want)
		}
	}
	if _, err := parse([]string{"--request-timeout", "soon"}); err == nil || !strings.Contains(err.Error(), "1s, 2m, 3h") {
		t.Errorf("bad --request-timeout: %v", err)
	}
}
