package cmd_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
)

// TestSecretsNeverLeakE2E: with a cacerts Secret in the cluster (a CA private key, as
// users plug in their own CA) and a Secret among the rendered objects (the base chart of a
// --manifests directory renders one, holding a token and a private key), no output of
// install (text and the -o json event stream), install --dry-run, verify-install (every
// format, with and without a spec, and while the Secret has drifted), x precheck (every
// format) or uninstall --dry-run shows a byte of either Secret's data: not the values, not
// their base64, not a line of a key's PEM body. manifest generate is left out on purpose:
// it prints the objects the user asked for, Secrets whole, as upstream's does.
func TestSecretsNeverLeakE2E(t *testing.T) {
	c := cluster.Get(t)
	toRepoRoot(t)
	ctx := context.Background()

	// What must never be printed.
	var needles []string
	secretValue := func(v []byte) []byte {
		needles = append(needles, base64.StdEncoding.EncodeToString(v))
		if block, _ := pem.Decode(v); block != nil {
			body := base64.StdEncoding.EncodeToString(block.Bytes)
			for i := 0; i+64 <= len(body); i += 64 {
				needles = append(needles, body[i:i+64]) // each line of the PEM body
			}
		} else {
			needles = append(needles, string(v))
		}
		return v
	}
	needles = append(needles, "PRIVATE KEY")
	key := func() []byte {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}

	// The user's CA, as istiod reads it: a whole one, since the checks refuse a broken
	// cacerts Secret istiod would use (TestUndeclaredCACertsE2E) and report a valid one.
	_, _ = c.Kube.CoreV1().Namespaces().Create(ctx, fixture.Namespace("istio-system"), metav1.CreateOptions{})
	ca := pki.New(t, pki.Valid).SecretData()
	secretValue(ca["ca-key.pem"])
	ca["password"] = secretValue([]byte("cacerts-password-7f3a9c"))
	cacerts := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cacerts", Namespace: "istio-system"}, Data: ca}
	_ = c.Kube.CoreV1().Secrets("istio-system").Delete(ctx, "cacerts", metav1.DeleteOptions{})
	if _, err := c.Kube.CoreV1().Secrets("istio-system").Create(ctx, cacerts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.CoreV1().Secrets("istio-system").Delete(context.Background(), "cacerts", metav1.DeleteOptions{})
	})

	// A Secret the install renders: the built-in charts and profiles, plus one template.
	manifests := filepath.Join(t.TempDir(), "manifests")
	for _, d := range []string{"charts", "profiles"} {
		src := filepath.Join("manifests", d)
		if d == "profiles" {
			src = "profiles"
		}
		if err := os.CopyFS(filepath.Join(manifests, d), os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	token := secretValue([]byte("rendered-token-e41b07d2"))
	tlsKey := secretValue(key())
	secretYAML := fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: istio-leak-test
  namespace: {{ .Release.Namespace }}
type: Opaque
data:
  token: %s
  tls.key: %s
`, base64.StdEncoding.EncodeToString(token), base64.StdEncoding.EncodeToString(tlsKey))
	if err := os.WriteFile(filepath.Join(manifests, "charts/base/templates/zz-leak-test-secret.yaml"), []byte(secretYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	drifted := secretValue([]byte("edited-by-hand-5d2c81"))

	spec := []string{"-d", manifests, "--set", "profile=minimal"}
	k := []string{"--kubeconfig", c.Kubeconfig}
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()
	checked := 0
	// ist runs istioctl and checks everything it printed, and its error, for the needles.
	ist := func(wantErr bool, args ...string) string {
		t.Helper()
		out, stderr, err := harness.Run(t, append(k, args...)...)
		if (err != nil) != wantErr {
			t.Fatalf("istioctl %s: err = %v, want an error: %v\n%s\n%s", strings.Join(args, " "), err, wantErr, out, stderr)
		}
		all := out + "\n" + stderr
		if err != nil {
			all += "\n" + err.Error()
		}
		for _, n := range needles {
			if i := strings.Index(all, n); i >= 0 {
				from, to := max(0, i-200), min(len(all), i+len(n)+200)
				t.Errorf("istioctl %s printed secret data %q:\n...%s...", strings.Join(args, " "), n, all[from:to])
			}
		}
		checked++
		return out
	}

	// The rendered Secret is really rendered: manifest generate prints it (and its data).
	if out := ist2(t, k, append([]string{"manifest", "generate"}, spec...)...); !strings.Contains(out, "name: istio-leak-test") || !strings.Contains(out, base64.StdEncoding.EncodeToString(token)) {
		t.Fatalf("the chart does not render the test Secret:\n%s", out)
	}

	for _, f := range []string{"text", "json", "yaml", "junit"} {
		ist(false, append([]string{"x", "precheck", "-o", f}, spec...)...)
	}
	ist(false, append([]string{"install", "--dry-run"}, spec...)...)
	ist(false, append([]string{"install", "--dry-run", "-o", "json"}, spec...)...)
	if out := ist(false, append([]string{"install", "-y", "-v"}, spec...)...); !strings.Contains(out, "Secret/istio-system/istio-leak-test created") {
		t.Fatalf("install did not create the rendered Secret:\n%s", out)
	}
	ist(false, append([]string{"install", "-y", "-o", "json"}, spec...)...)
	ist(false, append([]string{"install", "--dry-run", "-o", "json"}, spec...)...)
	for _, f := range []string{"text", "json", "yaml", "junit"} {
		ist(false, append([]string{"verify-install", "-o", f}, spec...)...)
		ist(false, "verify-install", "-o", f)
	}

	// Someone edits the Secret: verify-install reports the drift, without the values.
	patch := fmt.Sprintf(`{"data":{"token":%q}}`, base64.StdEncoding.EncodeToString(drifted))
	if _, err := c.Kube.CoreV1().Secrets("istio-system").Patch(ctx, "istio-leak-test", types.MergePatchType, []byte(patch),
		metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"text", "json", "yaml", "junit"} {
		out := ist(true, append([]string{"verify-install", "-o", f}, spec...)...)
		if !strings.Contains(out, "Secret/istio-system/istio-leak-test") || !strings.Contains(out, "data.token") {
			t.Errorf("verify-install -o %s does not report the Secret's drift:\n%s", f, out)
		}
	}
	// A dry run shows how the Secret would change: which keys, not their values.
	if out := ist(false, append([]string{"install", "--dry-run"}, spec...)...); !strings.Contains(out, "istio-leak-test") || !strings.Contains(out, "***") {
		t.Errorf("the dry run does not show the drifted Secret's diff, masked:\n%s", out)
	}
	ist(false, append([]string{"install", "--dry-run", "-o", "json"}, spec...)...)
	// Install puts it back (taking the field over from kubectl-edit, with a warning).
	ist(false, append([]string{"install", "-y", "-o", "json"}, spec...)...)
	ist(false, append([]string{"verify-install", "-o", "json"}, spec...)...)
	ist(false, "uninstall", "--dry-run", "-r", "default", "-o", "json")
	ist(false, "uninstall", "--dry-run", "--purge")
	ist(false, "history")
	ist(false, "history", "-o", "json")
	if !t.Failed() {
		t.Logf("%d command runs, %d secret byte strings: none printed", checked, len(needles))
	}
}

// ist2 runs istioctl and fails the test on an error; its output is not checked.
func ist2(t *testing.T, k []string, args ...string) string {
	t.Helper()
	out, stderr, err := harness.Run(t, append(k, args...)...)
	if err != nil {
		t.Fatalf("istioctl %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr)
	}
	return out
}
