package cmd_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// serveInjector plays istiod's sidecar injector in a bed cluster, where no istiod runs:
// it serves the webhook on the istiod Service's loopback ClusterIP (port 443), admitting
// every pod as it is, and writes its CA into the caBundle of every mutating webhook that
// calls that Service, as istiod would. Injected gateways (the east-west gateway's
// injectionTemplate) then get their pods. It stops when the test ends.
func serveInjector(t *testing.T, c *cluster.Cluster, ns, service string) {
	t.Helper()
	ctx := context.Background()
	svc, err := c.Kube.CoreV1().Services(ns).Get(ctx, service, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ip := net.ParseIP(svc.Spec.ClusterIP)
	if ip == nil || !ip.IsLoopback() {
		t.Fatalf("Service %s/%s has ClusterIP %q, not a loopback address: refusing to serve there", ns, service, svc.Spec.ClusterIP)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: service + "." + ns + ".svc"},
		DNSNames:    []string{service + "." + ns + ".svc"},
		IPAddresses: []net.IP{ip},
		NotBefore:   time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "443"))
	if err != nil {
		t.Fatalf("serving the injector on %s:443: %v", ip, err)
	}
	srv := &http.Server{
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var review admissionv1.AdmissionReview
			if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
				http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
				return
			}
			review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
			review.Request = nil
			_ = json.NewEncoder(w).Encode(review)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })

	// The injection webhooks, and the validation webhooks the same Service serves.
	mwcs, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range mwcs.Items {
		var refs []*admissionregv1.ServiceReference
		for _, w := range h.Webhooks {
			refs = append(refs, w.ClientConfig.Service)
		}
		if body := caBundlePatch(refs, ns, service, caPEM); body != nil {
			if _, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Patch(ctx, h.Name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: "test-injector"}); err != nil {
				t.Fatalf("setting the caBundle of %s: %v", h.Name, err)
			}
		}
	}
	vwcs, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range vwcs.Items {
		var refs []*admissionregv1.ServiceReference
		for _, w := range h.Webhooks {
			refs = append(refs, w.ClientConfig.Service)
		}
		if body := caBundlePatch(refs, ns, service, caPEM); body != nil {
			if _, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Patch(ctx, h.Name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: "test-injector"}); err != nil {
				t.Fatalf("setting the caBundle of %s: %v", h.Name, err)
			}
		}
	}
}

// caBundlePatch is the JSON patch that gives the webhooks calling ns/service the CA; nil
// when none does.
func caBundlePatch(refs []*admissionregv1.ServiceReference, ns, service string, ca []byte) []byte {
	var patch []map[string]any
	for i, s := range refs {
		if s != nil && s.Name == service && s.Namespace == ns {
			patch = append(patch, map[string]any{"op": "add", "path": "/webhooks/" + itoa(i) + "/clientConfig/caBundle", "value": ca})
		}
	}
	if len(patch) == 0 {
		return nil
	}
	body, _ := json.Marshal(patch)
	return body
}

func itoa(i int) string { return big.NewInt(int64(i)).String() }
