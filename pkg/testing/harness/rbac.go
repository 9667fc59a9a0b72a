package harness

import (
	"context"
	"fmt"
	"testing"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// Authorized waits until the cluster's authorizer allows user every one of allowed (a
// SubjectAccessReview each): a Role or binding a test just created takes effect once the
// apiserver's RBAC informer has seen it, which load delays, so a test acting as that user
// at once could be refused what it was just granted. Fails the test after 30 s.
func Authorized(t testing.TB, c *cluster.Cluster, user string, allowed ...authv1.ResourceAttributes) {
	t.Helper()
	Eventually(t, 30*time.Second, "RBAC granted to "+user, func() (bool, string) {
		for _, a := range allowed {
			r, err := c.Kube.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authv1.SubjectAccessReview{
				Spec: authv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &a}}, metav1.CreateOptions{})
			if err != nil {
				return false, err.Error()
			}
			if !r.Status.Allowed {
				return false, fmt.Sprintf("%s %s.%s in %q not allowed yet", a.Verb, a.Resource, a.Group, a.Namespace)
			}
		}
		return true, ""
	})
}
