package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestConnectionFlagsFromEnvironment: every connection flag takes ISTIOCTL_<FLAG> (viper,
// applyConfig), and the command line wins over it.
func TestConnectionFlagsFromEnvironment(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	names := []string{"kubeconfig", "context", "namespace", "as", "as-group", "as-uid", "kubeclient-timeout", "server", "token", "user",
		"cluster", "certificate-authority", "client-certificate", "client-key", "insecure-skip-tls-verify", "tls-server-name", "request-timeout"}
	values := map[string]string{"kubeclient-timeout": "7s", "request-timeout": "9", "insecure-skip-tls-verify": "true"}
	for _, n := range names {
		v, ok := values[n]
		if !ok {
			v = "from-env-" + n
		}
		values[n] = v
		t.Setenv("ISTIOCTL_"+strings.ToUpper(strings.ReplaceAll(n, "-", "_")), v)
	}
	g := &Globals{}
	root := newRootCommand(g)
	version, _, err := root.Find([]string{"version"})
	if err != nil {
		t.Fatal(err)
	}
	if err := version.ParseFlags([]string{"--server", "https://from-flag:6443"}); err != nil {
		t.Fatal(err)
	}
	if err := applyConfig(version); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		f := version.Flags().Lookup(n)
		if f == nil {
			t.Errorf("no --%s", n)
			continue
		}
		want := values[n]
		if n == "server" {
			want = "https://from-flag:6443"
		}
		if got := flagValue(f); got != want {
			t.Errorf("--%s = %q, want %q", n, got, want)
		}
	}
	if g.Kube.Token != "from-env-token" || g.Kube.Timeout != 7*time.Second || !g.Kube.RequestTimeout.Given() || !g.Kube.InsecureSkipTLSVerify {
		t.Errorf("flags: %+v", g.Kube)
	}
}

func flagValue(f *pflag.Flag) string {
	if s, ok := f.Value.(pflag.SliceValue); ok {
		return strings.Join(s.GetSlice(), ",")
	}
	return f.Value.String()
}
