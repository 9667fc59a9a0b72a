package cmd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestConnectionFlagsE2E: precheck, install and verify-install reach the cluster with only
// --server, --token (a ServiceAccount's) and --certificate-authority, with no kubeconfig
// anywhere (an empty HOME, no KUBECONFIG); then the same through ISTIOCTL_SERVER,
// ISTIOCTL_TOKEN and ISTIOCTL_CERTIFICATE_AUTHORITY. The token is in no output, not even the
// errors of a refused connection or of a rejected token; -o json's done carries the exit code.
func TestConnectionFlagsE2E(t *testing.T) {
	c := cluster.Get(t)
	bin := harness.BuildIstioctl(t, "")
	ctx := context.Background()
	t.Setenv("HOME", t.TempDir())
	ist := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	ist("uninstall", "--purge", "-y") // a fresh cluster for precheck
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()

	ns := c.Namespace(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ci-installer", Namespace: ns}}
	if _, err := c.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "connection-e2e-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}},
	}
	if _, err := c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
	})
	harness.Authorized(t, c, "system:serviceaccount:"+ns+":"+sa.Name,
		authv1.ResourceAttributes{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system"})
	tr, err := c.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := tr.Status.Token
	ca := c.Config.CAData
	if len(ca) == 0 {
		if ca, err = os.ReadFile(c.Config.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir() // empty: no ~/.kube/config, no ~/.istioctl
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}

	var outputs []string // everything any run printed
	istioctl := func(env []string, args ...string) (string, int) {
		t.Helper()
		// Nothing of the test's environment: no KUBECONFIG, no ISTIOCTL_TEST_KUBECONFIG.
		r := harness.Istioctl{T: t, Bin: bin, Isolated: true, Env: append([]string{"HOME=" + home}, env...)}.Run(args...)
		outputs = append(outputs, r.Output())
		return r.Output(), r.Code
	}
	mustRun := func(env []string, args ...string) string {
		t.Helper()
		out, code := istioctl(env, args...)
		if code != 0 {
			t.Fatalf("istioctl %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		return out
	}
	flags := []string{"--server", c.Config.Host, "--token", token, "--certificate-authority", caFile}
	env := []string{"ISTIOCTL_SERVER=" + c.Config.Host, "ISTIOCTL_TOKEN=" + token, "ISTIOCTL_CERTIFICATE_AUTHORITY=" + caFile}

	// With the flags.
	mustRun(nil, append(flags, "x", "precheck")...)
	out := mustRun(nil, append(flags, "install", "-y", "--set", "profile=minimal", "-o", "json")...)
	if done := lastDone(t, out); done["exitCode"] != float64(0) || done["error"] != nil {
		t.Errorf("install -o json: done %v, want exitCode 0", done)
	}
	mustRun(nil, append(flags, "verify-install", "--set", "profile=minimal")...)

	// With the environment only, on the installed revision.
	mustRun(env, "x", "precheck", "--set", "profile=minimal")
	if out := mustRun(env, "install", "-y", "--set", "profile=minimal"); !strings.Contains(out, "Installation complete") {
		t.Errorf("install through ISTIOCTL_*:\n%s", out)
	}
	mustRun(env, "verify-install", "--set", "profile=minimal")
	mustRun(env, "history", "-o", "json") // the whole records, spec included: checked below
	numbers := strings.Fields(mustRun(env, "history", "-o", "jsonpath={.items[*].number}"))
	slices.Reverse(numbers)
	if got := complete(t, append(slices.Clone(flags), "rollback", "")...); len(numbers) == 0 || !slices.Equal(got.candidates, numbers) {
		t.Errorf("rollback completion through the flags: %q, want the records %q", got.candidates, numbers)
	}

	// Failures name the cluster, never the token.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	for _, args := range [][]string{
		{"--server", "https://" + closed, "--token", token, "--certificate-authority", caFile, "install", "-y"},
		{"--server", c.Config.Host, "--token", token + "x", "--certificate-authority", caFile, "verify-install"},
		{"--token", token, "x", "precheck"},
	} {
		if out, code := istioctl(nil, args...); code != 1 {
			t.Errorf("istioctl %s: exit %d, want 1\n%s", strings.Join(args[len(args)-2:], " "), code, out)
		}
	}
	for _, o := range outputs {
		if strings.Contains(o, token) || strings.Contains(o, token[len(token)-24:]) {
			t.Fatalf("the token is in istioctl's output:\n%s", o)
		}
	}
}

// lastDone is the last done event of a JSON event stream.
func lastDone(t *testing.T, stream string) map[string]any {
	t.Helper()
	done, ok := doneOf(stream)
	if !ok {
		t.Fatalf("no done event in:\n%s", stream)
	}
	return done
}

// doneOf finds the last done event among output lines (others are skipped).
func doneOf(stream string) (map[string]any, bool) {
	var done map[string]any
	sc := bufio.NewScanner(strings.NewReader(stream))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e map[string]any
		if json.Unmarshal(sc.Bytes(), &e) == nil && e["type"] == "done" {
			done = e
		}
	}
	return done, done != nil
}
