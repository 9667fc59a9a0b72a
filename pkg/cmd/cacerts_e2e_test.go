package cmd_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
)

// TestUndeclaredCACertsE2E: a spec that declares no CA, and a cacerts Secret in istiod's
// namespace, which istiod signs with whenever it is there. Absent: nothing is said. Broken
// (a key of another certificate, expired, a key missing, another root): x precheck fails
// and install refuses before any write request (istioctl talks through a recording proxy),
// each naming cacerts and the problem with the messages a declared CA gets. Valid: precheck,
// install and verify-install (from the spec and from the labels) pass and name it as the CA
// istiod will use; broken after the install, verify-install fails. No output holds a byte of
// the private keys.
func TestUndeclaredCACertsE2E(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	ns := c.Namespace(t)
	proxied, log := harness.RecordingProxy(t, c)
	x := harness.Istioctl{T: t, Kubeconfig: proxied}
	direct := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}
	spec := harness.SpecFile(t, "mesh.yaml", harness.OperatorHeader+"metadata:\n  namespace: "+ns+"\nspec:\n  profile: minimal\n  namespace: "+ns+
		"\n  values:\n    global:\n      istioNamespace: "+ns+"\n")
	direct.PurgeAtEnd()
	secret := "Secret/" + ns + "/cacerts: "
	var outputs, keyLines []string
	put := func(v pki.Variant) {
		t.Helper()
		ca := pki.New(t, v)
		keyLines = append(keyLines, ca.KeyLines()...)
		_ = c.Kube.CoreV1().Secrets(ns).Delete(ctx, "cacerts", metav1.DeleteOptions{})
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cacerts", Namespace: ns}, Data: ca.SecretData()}
		if _, err := c.Kube.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	out, err := x.Try("x", "precheck", "-v", "-f", spec)
	outputs = append(outputs, out)
	if err != nil || strings.Contains(out, secret) {
		t.Errorf("precheck without a cacerts Secret: %v\n%s", err, out)
	}

	for _, tc := range []struct {
		v    pki.Variant
		want string
	}{
		{pki.WrongKey, "ca-key.pem does not match the certificate in ca-cert.pem: it is the private key of another certificate"},
		{pki.Expired, "the CA certificate in ca-cert.pem (CN=Test Intermediate CA) expired on"},
		{pki.MissingKey, "missing key(s) ca-key.pem: istiod needs ca-cert.pem, ca-key.pem, root-cert.pem, cert-chain.pem"},
		{pki.OtherRoot, "the certificate in ca-cert.pem (CN=Test Intermediate CA) does not chain to root-cert.pem"},
	} {
		put(tc.v)
		out, err := x.Try("x", "precheck", "-v", "-f", spec)
		outputs = append(outputs, out)
		if exitCode(err) != 1 {
			t.Errorf("%s: precheck exit %d, want 1\n%s", tc.v, exitCode(err), out)
		}
		mustContain(t, string(tc.v)+" precheck", out, "✘ "+secret+tc.want, "the spec declares no CA, but istiod signs with this Secret because it exists")

		log.Take()
		out, err = x.Try("install", "-f", spec, "-y", "-i", ns)
		reqs := log.Take()
		outputs = append(outputs, out)
		if err == nil {
			t.Errorf("%s: install went ahead\n%s", tc.v, out)
		}
		mustContain(t, string(tc.v)+" install", out, "✘ "+secret+tc.want, "Nothing was written")
		if w := harness.InstallWrites(reqs); len(w) > 0 {
			t.Errorf("%s: the refused install sent %d write request(s) besides the lock's: %v", tc.v, len(w), w)
		}
		if _, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, "istiod", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the refused install wrote istiod (%v)", tc.v, err)
		}
	}

	put(pki.Valid)
	const named = "✔ " + "Secret/%s/cacerts: istiod will sign with this plugged-in CA (the spec declares none): CA CN=Test Intermediate CA, valid until"
	want := strings.Replace(named, "%s", ns, 1)
	out = x.MustOutput("x", "precheck", "-v", "-f", spec)
	outputs = append(outputs, out)
	mustContain(t, "precheck of a valid CA", out, want)
	out = direct.MustOutput("install", "-f", spec, "-y", "-i", ns)
	outputs = append(outputs, out)
	mustContain(t, "install with a valid CA", out, want)
	out = direct.MustOutput("verify-install", "-f", spec, "-i", ns)
	outputs = append(outputs, out)
	mustContain(t, "verify-install -f with a valid CA", out, want)
	out = direct.MustOutput("verify-install", "-i", ns)
	outputs = append(outputs, out)
	mustContain(t, "verify-install from the labels with a valid CA", out, want)

	put(pki.WrongKey)
	out, err = direct.Try("verify-install", "-i", ns)
	outputs = append(outputs, out)
	if exitCode(err) != 1 {
		t.Errorf("verify-install with a broken CA: exit %d, want 1\n%s", exitCode(err), out)
	}
	mustContain(t, "verify-install with a broken CA", out, "✘ "+secret+"ca-key.pem does not match")

	for _, o := range outputs {
		for _, l := range keyLines {
			if strings.Contains(o, l) {
				t.Fatalf("an output holds private key material:\n%s", o)
			}
		}
	}
}
