package check

import (
	"strings"
	"testing"
	"time"

	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
)

func TestExternalInspectCA(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		v    pki.Variant
		edit func(map[string][]byte)
		want []string // errors, in order; none for a valid CA
	}{
		{v: pki.Valid},
		{v: pki.Expired, want: []string{"the CA certificate in ca-cert.pem (CN=Test Intermediate CA) expired on"}},
		{v: pki.WrongKey, want: []string{"ca-key.pem does not match the certificate in ca-cert.pem"}},
		{v: pki.MissingKey, want: []string{"missing key(s) ca-key.pem: istiod needs ca-cert.pem, ca-key.pem, root-cert.pem, cert-chain.pem"}},
		{v: pki.OtherRoot, want: []string{"the certificate in ca-cert.pem (CN=Test Intermediate CA) does not chain to root-cert.pem: x509: certificate signed by unknown authority"}},
		{v: pki.Valid, edit: func(d map[string][]byte) { d["ca-cert.pem"] = []byte("not a certificate") },
			want: []string{"ca-cert.pem: holds no PEM certificate"}},
		{v: pki.Valid, edit: func(d map[string][]byte) { d["ca-key.pem"] = d["ca-cert.pem"] },
			want: []string{"ca-key.pem: holds no PEM private key"}},
		{v: pki.Valid, edit: func(d map[string][]byte) { // the root used as the CA: not its key
			d["ca-cert.pem"] = d["root-cert.pem"]
		}, want: []string{"ca-key.pem does not match"}},
		{v: pki.Valid, edit: func(d map[string][]byte) { // kubernetes.io/tls layout
			d["tls.crt"], d["tls.key"], d["ca.crt"] = d["ca-cert.pem"], d["ca-key.pem"], d["root-cert.pem"]
			for _, k := range []string{"ca-cert.pem", "ca-key.pem", "root-cert.pem", "cert-chain.pem"} {
				delete(d, k)
			}
		}},
		{v: pki.Valid, edit: func(d map[string][]byte) {
			delete(d, "tls.key")
			d["tls.crt"] = d["ca-cert.pem"]
			delete(d, "ca-cert.pem")
		},
			want: []string{"missing key(s) tls.key, ca.crt: istiod needs tls.crt, tls.key, ca.crt"}},
	} {
		ca := pki.New(t, tc.v)
		data := ca.SecretData()
		if tc.edit != nil {
			tc.edit(data)
		}
		findings, ok := inspectCA(data, now)
		var errs []string
		var all strings.Builder
		for _, f := range findings {
			all.WriteString(f.Msg + "\n")
			if f.Severity == Error {
				errs = append(errs, f.Msg)
			}
		}
		all.WriteString(ok)
		name := string(tc.v)
		if len(errs) != len(tc.want) {
			t.Errorf("%s: errors %q, want %q", name, errs, tc.want)
			continue
		}
		for i := range errs {
			if !strings.HasPrefix(errs[i], tc.want[i]) {
				t.Errorf("%s: error %q, want it to start %q", name, errs[i], tc.want[i])
			}
		}
		if len(tc.want) == 0 && !strings.Contains(ok, "CA CN=Test Intermediate CA, valid until") {
			t.Errorf("%s: ok message %q", name, ok)
		}
		// Never a byte of key material in what is said.
		for _, line := range ca.KeyLines() {
			if strings.Contains(all.String(), line) || strings.Contains(all.String(), line[:16]) {
				t.Fatalf("%s: a message quotes the private key:\n%s", name, all.String())
			}
		}
	}
}

func TestExternalInspectCAExpiresSoon(t *testing.T) {
	ca := pki.New(t, pki.Valid)
	later := ca.Intermediate.NotAfter.Add(-10 * 24 * time.Hour)
	findings, _ := inspectCA(ca.SecretData(), later)
	if len(findings) != 1 || findings[0].Severity != Warning || !strings.Contains(findings[0].Msg, "expires on") || !strings.Contains(findings[0].Msg, "in 9 day(s)") && !strings.Contains(findings[0].Msg, "in 10 day(s)") {
		t.Errorf("findings = %+v", findings)
	}
}
