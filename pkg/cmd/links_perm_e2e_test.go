package cmd_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// secretsPermission: precheck asks for get and list on Secrets in the istio namespace only
// when the spec names the cluster, and verify-install as an identity that may read
// everything but Secrets passes with the link checks as one warning saying so.
func secretsPermission(t *testing.T, l *linkBed, spec []string) {
	c1 := l.member("cluster-1")
	asks := func(args ...string) bool {
		var rep struct {
			Results []struct{ Object, Message string } `json:"results"`
		}
		out, errOut, _ := l.istioctl("cluster-1", append([]string{"x", "precheck", "-o", "json"}, args...)...)
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("precheck -o json: %v\n%s\n%s", err, out, errOut)
		}
		// One result per resource kind, the verbs you have in it.
		for _, r := range rep.Results {
			if r.Object == "Namespace/istio-system" && r.Message == "may get, list secrets" {
				return true
			}
		}
		return false
	}
	if !asks(spec...) {
		t.Error("precheck of a spec naming its cluster does not ask for get and list on Secrets in istio-system")
	}
	if asks() {
		t.Error("precheck of a spec without a cluster name asks for Secrets")
	}

	kubeconfig := noSecretsKubeconfig(t, c1)
	out, errOut, err := harness.Run(t, append([]string{"--kubeconfig", kubeconfig, "verify-install"}, spec...)...)
	l.record(false, out, errOut)
	if err != nil {
		t.Fatalf("verify-install without reading Secrets: %v\n%s\n%s", err, out, errOut)
	}
	for _, want := range []string{"cannot read the link Secrets", "reading Secrets in the istio namespace needs get and list on secrets there"} {
		if !strings.Contains(out, want) {
			t.Errorf("verify-install without reading Secrets says\n%s\nwant %q", out, want)
		}
	}
}

// noSecretsKubeconfig is a kubeconfig for cluster c as a ServiceAccount that may get, list
// and watch every resource of every API group, except Secrets.
func noSecretsKubeconfig(t *testing.T, member *cluster.Cluster) string {
	t.Helper()
	ctx := context.Background()
	ns := member.Namespace(t)
	sa, err := member.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "no-secrets"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, lists, err := member.Kube.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	var core []string
	groups := map[string]bool{}
	for _, list := range lists {
		gv := strings.Split(list.GroupVersion, "/")
		if len(gv) == 2 {
			groups[gv[0]] = true
			continue
		}
		for _, r := range list.APIResources {
			if r.Name != "secrets" {
				core = append(core, r.Name)
			}
		}
	}
	rule := rbacv1.PolicyRule{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: core}
	rules := []rbacv1.PolicyRule{rule}
	for g := range groups {
		rules = append(rules, rbacv1.PolicyRule{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{g}, Resources: []string{"*"}})
	}
	name := "istioctl-e2e-" + ns
	if _, err := member.Kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = member.Kube.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}}}
	if _, err := member.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = member.Kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	tok, err := member.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"c": {Server: member.Config.Host, CertificateAuthorityData: member.Config.CAData}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"u": {Token: tok.Status.Token}},
		Contexts:       map[string]*clientcmdapi.Context{"c": {Cluster: "c", AuthInfo: "u"}},
		CurrentContext: "c",
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
