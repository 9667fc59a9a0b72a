package cmd_test

import (
	"context"
	"strings"
	"testing"

	authv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestUninstallWithoutPodAccess: a user who may remove everything an install made but may
// not list pods still uninstalls; the warning about the pods using the revision says it
// cannot tell, instead of refusing the uninstall.
func TestUninstallWithoutPodAccess(t *testing.T) {
	c := cluster.Get(t)
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	ns := c.Namespace(t)
	ist := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	ist("uninstall", "--purge", "-y")
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()
	ist("install", "-y", "--set", "profile=minimal")

	// Every kind an install writes, and no pods.
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "no-pods-" + ns}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps", "autoscaling", "policy", "rbac.authorization.k8s.io", "admissionregistration.k8s.io",
			"apiextensions.k8s.io", "networking.k8s.io", "discovery.k8s.io", "k8s.cni.cncf.io", "networking.istio.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		{APIGroups: []string{""}, Resources: []string{"services", "serviceaccounts", "configmaps", "secrets", "resourcequotas", "namespaces", "endpoints"}, Verbs: []string{"*"}},
		// The cluster lock every writer takes.
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}},
	}}
	if _, err := c.Kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{})
	})
	user := "no-pods-" + ns
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: user}}}
	if _, err := c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
	})

	harness.Authorized(t, c, user,
		authv1.ResourceAttributes{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system"},
		authv1.ResourceAttributes{Verb: "delete", Group: "apps", Resource: "deployments", Namespace: "istio-system"})
	out, stderr, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "--as", user, "uninstall", "-r", "default", "-y")
	if err != nil {
		t.Fatalf("uninstall by a user who may not list pods: %v\n%s\n%s", err, out, stderr)
	}
	if !strings.Contains(out, `! cannot tell which pods use revision "default": `) || !strings.Contains(out, "forbidden") ||
		!strings.Contains(out, "✔ Uninstall complete") {
		t.Errorf("uninstall output:\n%s", out)
	}
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod", metav1.GetOptions{}); err == nil {
		t.Error("istiod survived the uninstall")
	}
}
