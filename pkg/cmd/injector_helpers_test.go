package cmd_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
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
	stop, _, err := startInjector(c, ns, service)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
}

// startInjector is serveInjector for a goroutine: it returns its error, the server's stop
// and the CA it gave the webhooks.
func startInjector(c *cluster.Cluster, ns, service string) (stop func(), caPEM []byte, err error) {
	ctx := context.Background()
	svc, err := c.Kube.CoreV1().Services(ns).Get(ctx, service, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	ip := net.ParseIP(svc.Spec.ClusterIP)
	if ip == nil || !ip.IsLoopback() {
		return nil, nil, fmt.Errorf("Service %s/%s has ClusterIP %q, not a loopback address: refusing to serve there", ns, service, svc.Spec.ClusterIP)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
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
		return nil, nil, err
	}
	caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "443"))
	if err != nil {
		return nil, nil, fmt.Errorf("serving the injector on %s:443: %v", ip, err)
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
	stop = func() { _ = srv.Close() }

	if err := giveCA(ctx, c, ns, service, caPEM); err != nil {
		stop()
		return nil, nil, err
	}
	return stop, caPEM, nil
}

// giveCA writes caPEM into each webhook configuration calling ns/service (the injection
// webhooks, and the validation webhooks the same Service serves) that lacks it, as istiod
// would.
func giveCA(ctx context.Context, c *cluster.Cluster, ns, service string, caPEM []byte) error {
	admission := c.Kube.AdmissionregistrationV1()
	mwcs, err := admission.MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, h := range mwcs.Items {
		var hooks []admissionregv1.WebhookClientConfig
		for _, w := range h.Webhooks {
			hooks = append(hooks, w.ClientConfig)
		}
		if body := caBundlePatch(hooks, ns, service, caPEM); body != nil {
			if _, err := admission.MutatingWebhookConfigurations().Patch(ctx, h.Name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: "test-injector"}); err != nil {
				return fmt.Errorf("setting the caBundle of %s: %v", h.Name, err)
			}
		}
	}
	vwcs, err := admission.ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, h := range vwcs.Items {
		var hooks []admissionregv1.WebhookClientConfig
		for _, w := range h.Webhooks {
			hooks = append(hooks, w.ClientConfig)
		}
		if body := caBundlePatch(hooks, ns, service, caPEM); body != nil {
			if _, err := admission.ValidatingWebhookConfigurations().Patch(ctx, h.Name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: "test-injector"}); err != nil {
				return fmt.Errorf("setting the caBundle of %s: %v", h.Name, err)
			}
		}
	}
	return nil
}

// serveInjectorOnceInstalled is serveInjector for a cluster an install is about to give
// its istiod: it starts serving once the Service exists, and gives the CA to each webhook
// configuration calling it as the install makes them, until the test ends.
func serveInjectorOnceInstalled(t *testing.T, c *cluster.Cluster, ns, service string) {
	done, finished := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(done); <-finished })
	go func() {
		defer close(finished)
		ctx := context.Background()
		var stop func()
		var ca []byte
		for {
			select {
			case <-done:
				if stop != nil {
					stop()
				}
				return
			case <-time.After(50 * time.Millisecond):
			}
			if stop == nil {
				if _, err := c.Kube.CoreV1().Services(ns).Get(ctx, service, metav1.GetOptions{}); err != nil {
					continue
				}
				var err error
				if stop, ca, err = startInjector(c, ns, service); err != nil {
					t.Errorf("%s: serving the injector: %v", c.Context, err)
					return
				}
				continue
			}
			if err := giveCA(ctx, c, ns, service, ca); err != nil {
				t.Errorf("%s: %v", c.Context, err)
				return
			}
		}
	}()
}

// caBundlePatch is the JSON patch that gives the webhooks calling ns/service the CA; nil
// when none does or each already has it.
func caBundlePatch(hooks []admissionregv1.WebhookClientConfig, ns, service string, ca []byte) []byte {
	var patch []map[string]any
	for i, h := range hooks {
		if s := h.Service; s != nil && s.Name == service && s.Namespace == ns && !bytes.Equal(h.CABundle, ca) {
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
