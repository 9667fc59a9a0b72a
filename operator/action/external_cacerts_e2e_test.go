package action_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
)

// extSaid is every text a run handed on: its results, events and error.
type extSaid []string

func (s *extSaid) report(rep *check.Report) {
	for _, r := range rep.Results {
		*s = append(*s, r.Object, r.Message, r.Hint, r.Diff)
	}
}

func (s *extSaid) run(rec *event.Recorder, err error) {
	for _, e := range rec.Events {
		*s = append(*s, e.Object, e.Message, e.Error, strings.Join(e.Details, "\n"))
	}
	if err != nil {
		*s = append(*s, err.Error())
	}
}

// TestExternalCACertsE2E: a plugged-in CA the test generates. Valid: the check passes.
// Expired, wrong key, missing key, another root: precheck fails naming the problem, and
// install refuses without Force (writing nothing) and goes ahead with it. No result, event
// or error ever holds a byte of the private key.
func TestExternalCACertsE2E(t *testing.T) {
	c := cluster.Get(t)
	ctx := context.Background()
	ns := c.Namespace(t)
	opts := spec.Options{Files: []string{harness.SpecFile(t, "ca.yaml", harness.OperatorHeader+"spec:\n  profile: minimal\n  namespace: "+ns+
		"\n  values:\n    global:\n      istioNamespace: "+ns+"\n  external:\n    ca:\n      type: cacerts\n")}}
	secret := "Secret/" + ns + "/cacerts"
	var said extSaid
	var keyLines []string

	res := extPrecheck(t, c, opts)
	said.report(res.Report)
	if !res.Failed || !extSays(res.Report, false, secret, "missing: spec.external.ca.type is cacerts") {
		t.Fatalf("precheck without the Secret: failed %v: %+v", res.Failed, res.Report.Results)
	}

	for _, tc := range []struct {
		v    pki.Variant
		want string
	}{
		{pki.Valid, ""},
		{pki.Expired, "the CA certificate in ca-cert.pem (CN=Test Intermediate CA) expired on"},
		{pki.WrongKey, "ca-key.pem does not match the certificate in ca-cert.pem"},
		{pki.MissingKey, "missing key(s) ca-key.pem"},
		{pki.OtherRoot, "the certificate in ca-cert.pem (CN=Test Intermediate CA) does not chain to root-cert.pem"},
	} {
		ca := pki.New(t, tc.v)
		keyLines = append(keyLines, ca.KeyLines()...)
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cacerts", Namespace: ns}, Data: ca.SecretData()}
		_ = c.Kube.CoreV1().Secrets(ns).Delete(ctx, "cacerts", metav1.DeleteOptions{})
		if _, err := c.Kube.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		res := extPrecheck(t, c, opts)
		said.report(res.Report)
		var caFailures, otherFailures []string
		for _, r := range res.Report.Results {
			if r.Passed || r.Severity != check.Error {
				continue
			}
			if r.Check == "ca-plugged-in" {
				caFailures = append(caFailures, r.Message)
			} else {
				otherFailures = append(otherFailures, r.Check+": "+r.Message)
			}
		}
		if len(otherFailures) > 0 {
			t.Errorf("%s: unrelated precheck failures: %v", tc.v, otherFailures)
		}
		if tc.want == "" {
			if res.Failed || len(caFailures) > 0 || !extSays(res.Report, true, secret, "CA CN=Test Intermediate CA, valid until") {
				t.Errorf("precheck of a valid CA: failed %v, CA failures %v: %+v", res.Failed, caFailures, res.Report.Results)
			}
			continue
		}
		if !res.Failed || len(caFailures) != 1 || !strings.Contains(caFailures[0], tc.want) || !extSays(res.Report, false, secret, tc.want) {
			t.Errorf("%s: precheck failed %v, CA failures %q, want one of %s saying %q", tc.v, res.Failed, caFailures, secret, tc.want)
		}

		// Install refuses, writing nothing; Force goes ahead (a dry run here).
		_, rec, err := extInstall(c, action.Install{}, opts)
		said.run(rec, err)
		extErrorSays(t, string(tc.v)+": install without Force", err, tc.want, "Nothing was written")
		if _, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, "istiod", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the refused install wrote istiod (%v)", tc.v, err)
		}
		forced := opts
		forced.Force = true
		_, rec, err = extInstall(c, action.Install{DryRun: true}, forced)
		said.run(rec, err)
		if err != nil || !extEvent(rec, event.Warning, secret, "(ignored because of --force)") {
			t.Errorf("%s: install with Force: %v\n%s", tc.v, err, messages(rec, event.Warning))
		}
	}
	for _, s := range said {
		for _, l := range keyLines {
			if strings.Contains(s, l) {
				t.Fatalf("a result, event or error holds private key material:\n%s", s)
			}
		}
	}
}
