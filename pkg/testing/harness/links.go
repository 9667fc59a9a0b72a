package harness

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// What the link tests (create-remote-secret, remote-clusters, fleets) read of the clusters
// of a bed, from the command line or through the actions alike.

// LinkToken is the bearer token in a link Secret's kubeconfig for cluster id.
func LinkToken(t testing.TB, s *corev1.Secret, id string) string {
	t.Helper()
	cfg, err := clientcmd.Load(s.Data[id])
	if err != nil {
		t.Fatalf("Secret %s key %s: %v", s.Name, id, err)
	}
	return cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo].Token
}

// Authenticates says whether token authenticates at the apiserver of c.
func Authenticates(t testing.TB, c *cluster.Cluster, token string) bool {
	t.Helper()
	cfg := rest.AnonymousClientConfig(c.Config)
	cfg.BearerToken = token
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = kc.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsUnauthorized(err) {
		t.Fatalf("asking who the token is: %v", err)
	}
	return err == nil
}

// Revoked waits until token no longer authenticates at c: the apiserver caches a token's
// successful authentication for a few seconds (10 s by default), so a deleted token Secret
// revokes its token only then.
func Revoked(t testing.TB, c *cluster.Cluster, token string) bool {
	t.Helper()
	return Within(30*time.Second, time.Second, func() (bool, string) { return !Authenticates(t, c, token), "" }) == nil
}

// ServiceAccountTokens are the ServiceAccount tokens c's istio-system holds now.
func ServiceAccountTokens(t testing.TB, c *cluster.Cluster) []string {
	t.Helper()
	list, err := c.Kube.CoreV1().Secrets("istio-system").List(context.Background(), metav1.ListOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		if tok := s.Data[corev1.ServiceAccountTokenKey]; len(tok) > 0 {
			out = append(out, string(tok))
		}
	}
	return out
}

// ClearLinks removes what linking left in c after an uninstall --purge: the link Secrets,
// the token Secrets, the reader and its RBAC, and a fleet's shared cacerts (a purge leaves
// a CA it did not declare).
func ClearLinks(c *cluster.Cluster) {
	ctx := context.Background()
	secrets := c.Kube.CoreV1().Secrets("istio-system")
	_ = secrets.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "istio/multiCluster=true"})
	list, _ := secrets.List(ctx, metav1.ListOptions{})
	for _, s := range list.Items {
		if s.Type == corev1.SecretTypeServiceAccountToken {
			_ = secrets.Delete(ctx, s.Name, metav1.DeleteOptions{})
		}
	}
	_ = c.Kube.CoreV1().ServiceAccounts("istio-system").Delete(ctx, "istio-reader-service-account", metav1.DeleteOptions{})
	_ = c.Kube.RbacV1().ClusterRoles().Delete(ctx, "istio-reader-clusterrole-istio-system", metav1.DeleteOptions{})
	_ = c.Kube.RbacV1().ClusterRoleBindings().Delete(ctx, "istio-reader-clusterrole-istio-system", metav1.DeleteOptions{})
	_ = secrets.Delete(ctx, "cacerts", metav1.DeleteOptions{})
}
