// Package pki makes throw-away certificate authorities for tests: a root and an
// intermediate CA in the layout istiod reads from its cacerts Secret, whole or broken in
// the ways a plugged-in CA goes wrong (expired, wrong key, a key missing, another root).
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

// Variant is a way a plugged-in CA can be.
type Variant string

// The variants.
const (
	Valid      Variant = "valid"
	Expired    Variant = "expired"
	WrongKey   Variant = "wrong-key"
	MissingKey Variant = "missing-key"
	OtherRoot  Variant = "other-root"
)

// CA is a root and an intermediate CA signed by it.
type CA struct {
	Root, Intermediate       *x509.Certificate
	RootPEM, CertPEM, KeyPEM []byte
	// keys are every private key made, for KeyLines.
	keys [][]byte
}

// New makes a CA of the given variant.
func New(t testing.TB, v Variant) *CA {
	t.Helper()
	now := time.Now()
	rootKey := newKey(t)
	root := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Test Root CA", Organization: []string{"istioctl tests"}},
		NotBefore: now.Add(-48 * time.Hour), NotAfter: now.Add(10 * 365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	rootDER := sign(t, root, root, &rootKey.PublicKey, rootKey)
	rootCert, _ := x509.ParseCertificate(rootDER)

	key := newKey(t)
	inter := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "Test Intermediate CA", Organization: []string{"istioctl tests"}},
		NotBefore: now.Add(-24 * time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	if v == Expired {
		inter.NotBefore, inter.NotAfter = now.Add(-72*time.Hour), now.Add(-time.Hour)
	}
	interDER := sign(t, inter, rootCert, &key.PublicKey, rootKey)
	interCert, _ := x509.ParseCertificate(interDER)
	ca := &CA{Root: rootCert, Intermediate: interCert,
		RootPEM: pemOf("CERTIFICATE", rootDER), CertPEM: pemOf("CERTIFICATE", interDER), KeyPEM: keyPEM(t, key)}
	ca.keys = append(ca.keys, ca.KeyPEM, keyPEM(t, rootKey))
	switch v {
	case WrongKey:
		ca.KeyPEM = keyPEM(t, newKey(t))
		ca.keys = append(ca.keys, ca.KeyPEM)
	case OtherRoot:
		otherKey := newKey(t)
		other := *root
		other.Subject = pkix.Name{CommonName: "Another Root CA"}
		ca.RootPEM = pemOf("CERTIFICATE", sign(t, &other, &other, &otherKey.PublicKey, otherKey))
	}
	if v == MissingKey {
		ca.KeyPEM = nil
	}
	return ca
}

// KeyLines are the base64 lines of every private key the CA was made with: output that
// holds one of them leaks key material.
func (c *CA) KeyLines() []string {
	var out []string
	for _, k := range c.keys {
		for _, l := range strings.Split(string(k), "\n") {
			if l != "" && !strings.HasPrefix(l, "-----") {
				out = append(out, l)
			}
		}
	}
	return out
}

// SecretData is the cacerts Secret's data in Istio's layout; a nil value is left out.
func (c *CA) SecretData() map[string][]byte {
	out := map[string][]byte{
		"ca-cert.pem":    c.CertPEM,
		"ca-key.pem":     c.KeyPEM,
		"root-cert.pem":  c.RootPEM,
		"cert-chain.pem": append(append([]byte{}, c.CertPEM...), c.RootPEM...),
	}
	for k, v := range out {
		if v == nil {
			delete(out, k)
		}
	}
	return out
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func sign(t testing.TB, tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) []byte {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func keyPEM(t testing.TB, k *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pemOf("PRIVATE KEY", der)
}

func pemOf(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
