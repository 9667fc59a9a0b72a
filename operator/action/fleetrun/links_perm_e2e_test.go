package fleetrun_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/kubeflags"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// linkSecretsPermission: precheck asks for get and list on Secrets in the istio namespace
// only when the spec names the cluster, and verify-install as an identity that may read
// everything but Secrets passes with the link checks as one warning saying so.
func linkSecretsPermission(t *testing.T, l *linkRig) {
	c1 := l.member("cluster-1")
	asks := func(opts spec.Options) bool {
		p := action.Precheck(l.config("cluster-1"))
		p.Spec = &opts
		res, err := p.Run(context.Background())
		l.record(false, res, err)
		if err != nil {
			t.Fatalf("precheck: %v", err)
		}
		// One result per resource kind, the verbs you have in it.
		return slices.ContainsFunc(res.Report.Results, func(r check.Result) bool {
			return r.Object == "Namespace/istio-system" && r.Message == "may get, list secrets"
		})
	}
	if !asks(linkSpec("cluster-1")) {
		t.Error("precheck of a spec naming its cluster does not ask for get and list on Secrets in istio-system")
	}
	if asks(spec.Options{}) {
		t.Error("precheck of a spec without a cluster name asks for Secrets")
	}

	cfg := l.config("cluster-1")
	cfg.Kube = &kubeflags.Flags{Kubeconfig: linkNoSecretsKubeconfig(t, c1), Timeout: kubeflags.DefaultTimeout}
	res := l.verify("cluster-1", cfg)
	if res.Failed {
		t.Errorf("verify-install without reading Secrets fails: %s", linkFailures(res.Report))
	}
	for _, want := range []string{"cannot read the link Secrets", "reading Secrets in the istio namespace needs get and list on secrets there"} {
		if !slices.ContainsFunc(res.Report.Results, func(r check.Result) bool {
			return r.Severity == check.Warning && strings.Contains(r.Message+"\n"+r.Hint, want)
		}) {
			t.Errorf("verify-install without reading Secrets: no warning says %q: %+v", want, res.Report.Results)
		}
	}
}

// linkNoSecretsKubeconfig is a kubeconfig for member as a ServiceAccount that may get,
// list and watch every resource of every API group, except Secrets.
func linkNoSecretsKubeconfig(t *testing.T, member *cluster.Cluster) string {
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
	rules := []rbacv1.PolicyRule{{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: core}}
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
	harness.Authorized(t, member, "system:serviceaccount:"+ns+":"+sa.Name, authv1.ResourceAttributes{Verb: "list", Resource: core[0]})
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
