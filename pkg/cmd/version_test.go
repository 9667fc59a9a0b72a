package cmd_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/cmd"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// TestVersionClientOnly: version --remote=false prints upstream's short form by default,
// and in each form and format upstream's shape (testdata/version/, recorded from
// bin/upstream/istioctl; with it present, compared with it too): its fields, their order.
func TestVersionClientOnly(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, tc := range []struct{ name, args string }{
		{"short", ""}, {"long", "--short=false"}, {"json", "-o json"}, {"yaml", "-o yaml"},
	} {
		args := append([]string{"version", "--remote=false"}, strings.Fields(tc.args)...)
		out, _, err := harness.Run(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		if tc.name == "short" && out != "client version: "+version.Version+"\n" {
			t.Errorf("%s: %q, want upstream's short form", tc.name, out)
		}
		want, err := os.ReadFile(filepath.Join("../../testdata/version", tc.name+".txt"))
		if upstream, uerr := exec.Command("../../bin/upstream/istioctl", args...).Output(); uerr == nil {
			want, err = upstream, nil
		}
		if err != nil {
			t.Fatal(err)
		}
		if got, want := versionShape(out), versionShape(string(want)); got != want {
			t.Errorf("%s: shape\n%s\nwant upstream's\n%s", tc.name, got, want)
		}
	}
}

// versionShape is a version output without its values.
func versionShape(s string) string {
	for _, r := range []struct{ re, with string }{{`:"[^"]*"`, `:"_"`}, {`: "[^"]*"`, `: "_"`}, {`(?m): [^\s"{][^\n]*$`, `: _`}} {
		s = regexp.MustCompile(r.re).ReplaceAllString(s, r.with)
	}
	return s
}

func TestVersionRemote(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	out, _, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep cmd.VersionReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("decoding %q: %v", out, err)
	}
	if rep.Kubernetes != "v1.37.2" {
		t.Errorf("kubernetes version = %q, want v1.37.2", rep.Kubernetes)
	}
	if rep.Client.Version != version.Version {
		t.Errorf("client version = %q, want %q", rep.Client.Version, version.Version)
	}

	text, _, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "version")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kubernetes version: v1.37.2", "control plane version: none (no istiod Deployment in namespace istio-system)"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

// The kubeconfig can come from ISTIOCTL_KUBECONFIG or the config file; a flag wins over both.
func TestVersionConfigSources(t *testing.T) {
	c := cluster.Get(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")

	t.Setenv("ISTIOCTL_KUBECONFIG", c.Kubeconfig)
	if out, _, err := harness.Run(t, "version"); err != nil || !strings.Contains(out, "kubernetes version: v1.37.2") {
		t.Errorf("ISTIOCTL_KUBECONFIG: err=%v out=%q", err, out)
	}
	t.Setenv("ISTIOCTL_KUBECONFIG", "")

	cfgDir := filepath.Join(home, ".istioctl")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "config.yaml"), []byte("kubeconfig: "+c.Kubeconfig+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, err := harness.Run(t, "version"); err != nil || !strings.Contains(out, "kubernetes version: v1.37.2") {
		t.Errorf("config file: err=%v out=%q", err, out)
	}
	// The flag wins over the file: a kubeconfig that does not exist must be the one used.
	missing := filepath.Join(home, "missing-kubeconfig")
	if _, _, err := harness.Run(t, "--kubeconfig", missing, "version"); err == nil || !strings.Contains(err.Error(), "missing-kubeconfig") {
		t.Errorf("--kubeconfig %s: want an error naming it, got %v", missing, err)
	}
}

func TestVersionErrors(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		// prints: the client version is printed before the error.
		usage, prints bool
		want          string
	}{
		// Without a cluster the client version is still printed, and the error says how to
		// ask for it alone.
		{name: "no kubeconfig", args: []string{"version"}, prints: true, want: "(--remote=false prints the client's only): no kubeconfig found"},
		{name: "unknown output", args: []string{"version", "-o", "xml"}, usage: true, want: `--output "xml" is not supported`},
		{name: "unknown flag", args: []string{"version", "--bogus"}, usage: true, want: "unknown flag: --bogus"},
		{name: "unknown command", args: []string{"bogus"}, usage: true, want: `unknown command "bogus"`},
		{name: "bad env value", args: []string{"version", "--remote=false"}, env: map[string]string{"ISTIOCTL_KUBECLIENT_TIMEOUT": "soon"}, want: "ISTIOCTL_KUBECLIENT_TIMEOUT"},
		{name: "unreachable cluster", prints: true, args: []string{"version", "--kubeconfig", writeKubeconfig(t, "https://127.0.0.1:1")}, want: "cannot reach the cluster at https://127.0.0.1:1"},
		{name: "unknown context", prints: true, args: []string{"version", "--kubeconfig", writeKubeconfig(t, "https://127.0.0.1:1"), "--context", "nope"}, want: `context "nope" does not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			out, _, err := harness.Run(t, tc.args...)
			if err == nil || strings.HasPrefix(out, "client version: "+version.Version+"\n") != tc.prints {
				t.Fatalf("%q, %v: want an error, the client version printed %v", out, err, tc.prints)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			var usage *cmd.UsageError
			if errors.As(err, &usage) != tc.usage {
				t.Errorf("usage error = %v, want %v (%v)", !tc.usage, tc.usage, err)
			}
		})
	}
}

func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
