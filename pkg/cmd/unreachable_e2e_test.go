package cmd_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// clientTimeout is the --kubeclient-timeout the tests pass, and hangSlack what a command
// may take beyond it before the test calls it a hang. This bounds a hang; it does not time
// how fast anything is.
const (
	clientTimeout = 2 * time.Second
	hangSlack     = 10 * time.Second
)

// kubeconfigFor writes a kubeconfig for server with the given user block (YAML, indented
// for the users list).
func kubeconfigFor(t *testing.T, server, user string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: u
  user:
%s
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`, server, user)
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

type clusterFault struct {
	name string
	// args are the flags that point istioctl at the broken cluster.
	args func(t *testing.T) []string
	// want are substrings of the error: what went wrong and what to do.
	want []string
}

// TestUnreachableClusterFailsClearly: install -y, verify-install and x precheck, pointed at
// a closed port, at a server that accepts connections and never answers, at a context that
// does not exist, or with a client certificate file or credential plugin that is missing,
// each exit non-zero with an error that says what is wrong and what to do, and return
// within --kubeclient-timeout (plus slack) instead of hanging.
func TestUnreachableClusterFailsClearly(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	closed := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return addr
	}
	// A listener that never accepts: the kernel completes the TCP handshake, then nothing
	// ever answers the TLS hello.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	token := "    token: some-token"
	faults := []clusterFault{
		{"closed port", func(t *testing.T) []string {
			return []string{"--kubeconfig", kubeconfigFor(t, "https://"+closed(t), token)}
		}, []string{"cannot reach the cluster at https://127.0.0.1:", "connection refused", "is it running", "--kubeconfig/--context"}},
		{"server never answers", func(t *testing.T) []string {
			return []string{"--kubeconfig", kubeconfigFor(t, "https://"+silent.Addr().String(), token)}
		}, []string{"cannot reach the cluster at https://" + silent.Addr().String(), "timed out", "--kubeclient-timeout"}},
		{"no such context", func(t *testing.T) []string {
			return []string{"--kubeconfig", kubeconfigFor(t, "https://"+closed(t), token), "--context", "prod-typo"}
		}, []string{`context "prod-typo" does not exist`, "kubectl config get-contexts", "--context"}},
		{"no kubeconfig", func(t *testing.T) []string {
			return []string{"--kubeconfig", filepath.Join(t.TempDir(), "missing")}
		}, []string{"missing: no such file", "check --kubeconfig and the KUBECONFIG environment variable"}},
		{"missing client certificate file", func(t *testing.T) []string {
			return []string{"--kubeconfig", kubeconfigFor(t, "https://"+closed(t),
				"    client-certificate: /nonexistent/client.crt\n    client-key: /nonexistent/client.key")}
		}, []string{"unable to read client-cert /nonexistent/client.crt", "fix that context's entries, or pick another with --context"}},
		{"missing credential plugin", func(t *testing.T) []string {
			return []string{"--kubeconfig", kubeconfigFor(t, "https://"+closed(t),
				"    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /nonexistent/auth-plugin\n      interactiveMode: Never")}
		}, []string{"could not get credentials for the cluster", "/nonexistent/auth-plugin", "install or log in to that plugin, or pick another --context"}},
	}
	runFaults(t, faults)
}

// TestRejectedCredentialsFailClearly: a bogus token, and the token of a ServiceAccount
// deleted since (as a revoked or expired credential), against the real apiserver: 401,
// said as such, with what to do.
func TestRejectedCredentialsFailClearly(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	ns := c.Namespace(t)
	sa, err := c.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "gone"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := c.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Kube.CoreV1().ServiceAccounts(ns).Delete(ctx, sa.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	server := c.Config.Host
	want := []string{"the cluster at " + server + " rejected our credentials (expired or missing?)", "refresh them or pick another --context"}
	runFaults(t, []clusterFault{
		{"bogus token", func(t *testing.T) []string {
			return []string{"--kubeconfig", kubeconfigFor(t, server, "    token: bogus")}
		}, want},
		{"token of a deleted service account", func(t *testing.T) []string {
			return []string{"--kubeconfig", kubeconfigFor(t, server, "    token: "+tr.Status.Token)}
		}, want},
	})
}

func runFaults(t *testing.T, faults []clusterFault) {
	t.Helper()
	commands := [][]string{{"install", "-y"}, {"verify-install"}, {"x", "precheck"}}
	for _, f := range faults {
		for _, command := range commands {
			t.Run(f.name+"/"+strings.Join(command, " "), func(t *testing.T) {
				args := append(f.args(t), "--kubeclient-timeout", clientTimeout.String())
				start := time.Now()
				out, stderr, err := harness.Run(t, append(args, command...)...)
				elapsed := time.Since(start)
				if err == nil {
					t.Fatalf("succeeded:\n%s", out)
				}
				if exitCode(err) == 0 || isUsage(err) {
					t.Errorf("want exit 1, got %v", err)
				}
				for _, w := range f.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q:\n%v", w, err)
					}
				}
				if strings.Contains(out+stderr, "panic") {
					t.Errorf("output:\n%s\n%s", out, stderr)
				}
				if elapsed > clientTimeout+hangSlack {
					t.Errorf("took %s with --kubeclient-timeout %s: a hang", elapsed.Round(time.Millisecond), clientTimeout)
				}
				t.Logf("%s after %s", err, elapsed.Round(time.Millisecond))
			})
		}
	}
}
