package link

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/kube"
)

var (
	selfSubjectReviewsGVR       = schema.GroupVersionResource{Group: "authentication.k8s.io", Version: "v1", Resource: "selfsubjectreviews"}
	selfSubjectAccessReviewsGVR = schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectaccessreviews"}
)

// ProbeTimeout bounds each request a probe makes to a link's apiserver.
const ProbeTimeout = 10 * time.Second

// Probe is what a link's own credentials prove from here, against the apiserver its
// kubeconfig names.
type Probe struct {
	// Err says why the link could not be used at all (it does not decode, its credentials
	// are not in it, the server did not answer or refused them); the rest is then empty.
	Err error
	// Cause is Err's kind: "decode", "credentials", "unreachable", "tls", "unauthorized".
	Cause string
	// User is who the apiserver says the credentials are.
	User string
	// Denied lists what of the asked access the identity may not do; AccessErr says the
	// reviews could not be asked.
	Denied    []Access
	AccessErr error
	// Names are the cluster's names as its control plane shows them (none: it does not say).
	Names   []Name
	NameErr error
}

// Probe uses the link's credentials: who they are, whether they may do everything of
// access (SelfSubjectAccessReviews, cluster-wide), and the name of the cluster they reach
// (its istiod's CLUSTER_ID in ns). It never runs the kubeconfig's exec plugin nor reads
// files it names.
func (l *Link) Probe(ctx context.Context, access []Access, ns string) *Probe {
	p := &Probe{}
	rc, err := l.RESTConfig(ProbeTimeout)
	if err != nil {
		p.Err, p.Cause = err, "credentials"
		if _, derr := l.Config(); derr != nil {
			p.Cause = "decode"
		}
		return p
	}
	c, err := kube.NewClientForConfig(rc)
	if err != nil {
		p.Err, p.Cause = err, "credentials"
		return p
	}
	if p.User, err = whoAmI(ctx, c); err != nil {
		p.Err, p.Cause = explain(c, err)
		return p
	}
	p.Denied, p.AccessErr = denied(ctx, c, access)
	p.Names, p.NameErr = ClusterName(ctx, c, ns)
	return p
}

// whoAmI asks the apiserver who the client's credentials are (a SelfSubjectReview).
func whoAmI(ctx context.Context, c *kube.Client) (string, error) {
	review := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}}
	got, err := c.Dynamic.Resource(selfSubjectReviewsGVR).Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	user, _, _ := unstructured.NestedString(got.Object, "status", "userInfo", "username")
	return user, nil
}

// Authenticate asks the apiserver a link Secret's kubeconfig names who its credentials
// are: the proof a link works before the credentials it replaces are revoked.
func Authenticate(ctx context.Context, s *corev1.Secret) (string, error) {
	for key, kc := range s.Data {
		l := Link{ClusterID: key, Namespace: s.Namespace, Name: s.Name, kubeconfig: kc}
		return l.Authenticate(ctx)
	}
	return "", fmt.Errorf("Secret %s/%s holds no kubeconfig", s.Namespace, s.Name)
}

// Authenticate asks the apiserver the link's kubeconfig names who its credentials are: a
// link found in a cluster is kept while it still authenticates.
func (l *Link) Authenticate(ctx context.Context) (string, error) {
	rc, err := l.RESTConfig(ProbeTimeout)
	if err != nil {
		return "", err
	}
	c, err := kube.NewClientForConfig(rc)
	if err != nil {
		return "", err
	}
	user, err := whoAmI(ctx, c)
	if err != nil {
		err, _ = explain(c, err)
		return "", err
	}
	return user, nil
}

// explain names why a request with the link's credentials failed.
func explain(c *kube.Client, err error) (error, string) {
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the apiserver at %s rejects the credentials (401 Unauthorized): the token was revoked (its token Secret or ServiceAccount deleted) or expired; create the link again with create-remote-secret", c.Host), "unauthorized"
	case errors.As(err, &unknownAuthority), strings.Contains(err.Error(), "x509: certificate signed by unknown authority"):
		return fmt.Errorf("the apiserver at %s presents a certificate the link's certificate-authority-data does not sign (a proxy in front of it?): create the link again with the CA your kubeconfig trusts for it", c.Host), "tls"
	case errors.As(err, &hostname), errors.As(err, &invalid), strings.Contains(err.Error(), "x509: "):
		return fmt.Errorf("the apiserver at %s presents a certificate the link does not accept: %v (wrong --server, or --tls-server-name needed?)", c.Host, err), "tls"
	}
	return c.ExplainError(err), "unreachable"
}

// denied asks, for each access, whether the identity has it, a few reviews at a time.
func denied(ctx context.Context, c *kube.Client, access []Access) ([]Access, error) {
	allowed := make([]bool, len(access))
	errs := make([]error, len(access))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, a := range access {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ssar := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
				"spec": map[string]any{"resourceAttributes": map[string]any{"group": a.Group, "resource": a.Resource, "verb": a.Verb}},
			}}
			got, err := c.Dynamic.Resource(selfSubjectAccessReviewsGVR).Create(ctx, ssar, metav1.CreateOptions{})
			if err != nil {
				errs[i] = c.ExplainError(err)
				return
			}
			allowed[i], _, _ = unstructured.NestedBool(got.Object, "status", "allowed")
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("asking what the identity may do: %w", err)
		}
	}
	var out []Access
	for i, a := range access {
		if !allowed[i] {
			out = append(out, a)
		}
	}
	return out, nil
}
