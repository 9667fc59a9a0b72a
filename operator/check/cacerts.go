package check

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The layouts of a plugged-in CA Secret istiod reads: Istio's own, and kubernetes.io/tls's.
var (
	istioCAKeys = []string{"ca-cert.pem", "ca-key.pem", "root-cert.pem", "cert-chain.pem"}
	tlsCAKeys   = []string{"tls.crt", "tls.key", "ca.crt"}
)

// expirySoon is how close to its end a CA's validity earns a warning.
const expirySoon = 30 * 24 * time.Hour

// caFinding is one thing wrong with a plugged-in CA.
type caFinding struct {
	Severity Severity
	Msg      string
}

// inspectCA checks the data of a plugged-in CA Secret: the keys istiod needs are there, the
// certificates and the key parse, the CA certificate is a CA and valid now, the key is its
// key, and it chains to the root. Messages name keys, subjects and dates; they never quote
// the data (a key, above all). ok is what to say when nothing is wrong.
func inspectCA(data map[string][]byte, now time.Time) (findings []caFinding, ok string) {
	bad := func(format string, a ...any) {
		findings = append(findings, caFinding{Error, fmt.Sprintf(format, a...)})
	}
	warn := func(format string, a ...any) {
		findings = append(findings, caFinding{Warning, fmt.Sprintf(format, a...)})
	}
	keys := istioCAKeys
	if _, istio := data["ca-cert.pem"]; !istio {
		for _, k := range tlsCAKeys {
			if _, has := data[k]; has {
				keys = tlsCAKeys
			}
		}
	}
	certKey, keyKey, rootKey := keys[0], keys[1], keys[2]
	var missing []string
	for _, k := range keys {
		if len(data[k]) == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		bad("missing key(s) %s: istiod needs %s", strings.Join(missing, ", "), strings.Join(keys, ", "))
	}

	certs := func(key string) []*x509.Certificate {
		if len(data[key]) == 0 {
			return nil
		}
		cs, err := parseCertificates(data[key])
		if err != nil {
			bad("%s: %v", key, err)
		}
		return cs
	}
	caCerts, roots := certs(certKey), certs(rootKey)
	var chain []*x509.Certificate
	if len(keys) == len(istioCAKeys) {
		chain = certs(keys[3])
	}
	var ca *x509.Certificate
	if len(caCerts) > 0 {
		ca = caCerts[0]
		if !ca.BasicConstraintsValid || !ca.IsCA {
			bad("the certificate in %s (%s) is not a CA certificate (basic constraints CA:FALSE)", certKey, subject(ca))
		} else if ca.KeyUsage != 0 && ca.KeyUsage&x509.KeyUsageCertSign == 0 {
			bad("the certificate in %s (%s) may not sign certificates (no keyCertSign key usage)", certKey, subject(ca))
		}
		validity(ca, "the CA certificate in "+certKey, now, bad, warn)
	}
	for _, r := range roots {
		validity(r, "the root certificate in "+rootKey, now, bad, warn)
	}
	if len(data[keyKey]) > 0 {
		key, err := parsePrivateKey(data[keyKey])
		switch {
		case err != nil:
			bad("%s: %v", keyKey, err)
		case ca != nil && !samePublicKey(key, ca.PublicKey):
			bad("%s does not match the certificate in %s: it is the private key of another certificate", keyKey, certKey)
		}
	}
	if ca != nil && len(roots) > 0 {
		pool := x509.NewCertPool()
		for _, r := range roots {
			pool.AddCert(r)
		}
		inter := x509.NewCertPool()
		for _, c := range append(slices.Clone(caCerts[1:]), chain...) {
			inter.AddCert(c)
		}
		// Verify at a time the CA is valid: an expired CA is reported above, not here.
		at := now
		if now.Before(ca.NotBefore) || now.After(ca.NotAfter) {
			at = ca.NotBefore.Add(ca.NotAfter.Sub(ca.NotBefore) / 2)
		}
		if _, err := ca.Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			bad("the certificate in %s (%s) does not chain to %s: %v", certKey, subject(ca), rootKey, err)
		}
	}
	if ca == nil {
		return findings, ""
	}
	rootName := "itself"
	if len(roots) > 0 {
		rootName = subject(roots[0])
	}
	return findings, fmt.Sprintf("CA %s, valid until %s, chains to %s; the key matches", subject(ca), ca.NotAfter.UTC().Format(time.RFC3339), rootName)
}

func validity(c *x509.Certificate, what string, now time.Time, bad, warn func(string, ...any)) {
	switch {
	case now.After(c.NotAfter):
		bad("%s (%s) expired on %s", what, subject(c), c.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(c.NotBefore):
		bad("%s (%s) is not valid before %s", what, subject(c), c.NotBefore.UTC().Format(time.RFC3339))
	case c.NotAfter.Sub(now) < expirySoon:
		warn("%s (%s) expires on %s, in %d day(s): rotate it", what, subject(c), c.NotAfter.UTC().Format(time.RFC3339), int(c.NotAfter.Sub(now).Hours()/24))
	}
}

func subject(c *x509.Certificate) string {
	if c.Subject.CommonName != "" {
		return "CN=" + c.Subject.CommonName
	}
	if s := c.Subject.String(); s != "" {
		return s
	}
	return "no subject"
}

// parseCertificates reads every CERTIFICATE block of a PEM file.
func parseCertificates(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for i := 1; ; {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d does not parse: %v", i, err)
		}
		out = append(out, c)
		i++
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("holds no PEM certificate")
	}
	return out, nil
}

// parsePrivateKey reads a PKCS#1, PKCS#8 or SEC 1 (EC) private key. Its errors say which
// form was tried, never what the data holds.
func parsePrivateKey(data []byte) (crypto.Signer, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("holds no PEM private key")
		}
		var key any
		var err error
		switch block.Type {
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(block.Bytes)
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("the %s block does not parse", strings.ToLower(block.Type))
		}
		s, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("the %s block is not a signing key", strings.ToLower(block.Type))
		}
		return s, nil
	}
}

func samePublicKey(key crypto.Signer, pub crypto.PublicKey) bool {
	k, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(pub)
}
