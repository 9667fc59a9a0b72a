package fleetrun_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// linkBrokenLinks breaks cluster-1's link to cluster-2 in each way users hit, and checks
// that remote-clusters and verify-install name the cause and fail, and pass again once it
// is repaired (once while remote-clusters waits).
func linkBrokenLinks(outer *testing.T, top *linkRig) {
	// The closures below fail the subtest running them.
	t, l := outer, top
	ctx := context.Background()
	c1, c2 := l.member("cluster-1"), l.member("cluster-2")
	secrets1 := c1.Kube.CoreV1().Secrets("istio-system")
	relink := func() {
		l.applyLink("cluster-2", "cluster-1")
		l.collectTokens()
	}
	copyLink := func(ns, name string) {
		s := l.linkSecret("cluster-1", "istio-remote-secret-cluster-2")
		cp := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: s.Labels, Annotations: s.Annotations}, Data: s.Data}
		if _, err := c1.Kube.CoreV1().Secrets(ns).Create(ctx, cp, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deleteSecret := func(ns, name string) func() {
		return func() {
			if err := c1.Kube.CoreV1().Secrets(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	annotate := func(value string) func() {
		return func() { linkAnnotate(t, c1, "istio-remote-secret-cluster-2", value) }
	}
	other := c1.Namespace(outer)
	for _, tc := range []struct {
		name, want   string
		breakIt, fix func()
	}{
		{"reader token deleted", "rejects the credentials (401 Unauthorized)", func() {
			uid := linkClusterUID(t, c1)
			if err := c2.Kube.CoreV1().Secrets("istio-system").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "install.istio.io/remote-secret-for=" + uid}); err != nil {
				t.Fatal(err)
			}
			if !harness.Revoked(t, c2, harness.LinkToken(t, l.linkSecret("cluster-1", "istio-remote-secret-cluster-2"), "cluster-2")) {
				t.Fatal("the link's token still authenticates with its token Secret deleted")
			}
		}, relink},
		{"reader ClusterRoleBinding removed", "may do none of the", func() {
			if err := c2.Kube.RbacV1().ClusterRoleBindings().Delete(ctx, "istio-reader-clusterrole-istio-system", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, nil}, // repaired while remote-clusters waits, below
		{"wrong cluster ID in the annotation", `annotation says "cluster-9" but its data key`, annotate("cluster-9"), annotate("cluster-2")},
		{"cluster ID is not the cluster's name", `that cluster calls itself "cluster-2"`, func() {
			if _, _, err := l.createSecret("cluster-2", func(a *action.CreateRemoteSecret) { a.Name, a.ApplyTo = "cluster-x", "cluster-1" }); err != nil {
				t.Fatal(err)
			}
		}, deleteSecret("istio-system", "istio-remote-secret-cluster-x")},
		{"Secret in the wrong namespace", "istiod reads link Secrets only from istio-system", func() {
			copyLink(other, "istio-remote-secret-cluster-2")
		}, deleteSecret(other, "istio-remote-secret-cluster-2")},
		{"exec auth kubeconfig", `exec plugin aws (PILOT_INSECURE_MULTICLUSTER_KUBECONFIG_OPTIONS must list "exec")`, func() {
			cfg := clientcmdapi.Config{
				Clusters:       map[string]*clientcmdapi.Cluster{"eks": {Server: c2.Config.Host}},
				AuthInfos:      map[string]*clientcmdapi.AuthInfo{"eks": {Exec: &clientcmdapi.ExecConfig{Command: "aws", Args: []string{"eks", "get-token"}, APIVersion: "client.authentication.k8s.io/v1beta1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}},
				Contexts:       map[string]*clientcmdapi.Context{"eks": {Cluster: "eks", AuthInfo: "eks"}},
				CurrentContext: "eks",
			}
			kc, err := clientcmd.Write(cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "istio-remote-secret-eks", Labels: map[string]string{"istio/multiCluster": "true"},
				Annotations: map[string]string{"networking.istio.io/cluster": "eks"}}, Data: map[string][]byte{"eks": kc}}
			if _, err := secrets1.Create(ctx, s, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}, deleteSecret("istio-system", "istio-remote-secret-eks")},
		{"two Secrets for one cluster ID", "is also in istio-system/", func() {
			copyLink("istio-system", "cluster-2-by-hand")
			_, _, err := l.createSecret("cluster-2", func(a *action.CreateRemoteSecret) { a.Name, a.ApplyTo = "cluster-2", "cluster-1" })
			if err == nil || !strings.Contains(err.Error(), "Secret istio-system/cluster-2-by-hand there already carries cluster ID cluster-2") {
				t.Errorf("--apply-to next to a second Secret for the cluster ID: %v", err)
			}
		}, deleteSecret("istio-system", "cluster-2-by-hand")},
	} {
		outer.Run(tc.name, func(st *testing.T) {
			t, l = st, top.with(st)
			tc.breakIt()
			l.broken("cluster-1", tc.want)
			if tc.fix == nil {
				linkWaitRepaired(t, l, relink)
				return
			}
			tc.fix()
			l.mustWork("cluster-1")
		})
	}
}

// linkWaitRepaired runs remote-clusters with Wait on a broken link and repairs it when
// the first attempt has failed: the wait must see it broken first, then pass.
func linkWaitRepaired(t *testing.T, l *linkRig, repair func()) {
	var attempts []int
	r := &action.RemoteClusters{Config: l.config("cluster-1"), Wait: true, Timeout: 90 * time.Second,
		Retry: func(attempt int, res *action.RemoteClustersResult) {
			l.record(false, res)
			if attempts = append(attempts, attempt); attempt == 1 && res.Broken {
				repair()
			}
		}}
	res, err := r.Run(context.Background())
	l.record(false, res, err)
	if err != nil || res.Broken || len(attempts) == 0 || attempts[0] != 1 {
		t.Errorf("remote-clusters --wait: %v, broken %v after attempts %v; want it to pass after a failed attempt 1", err, res != nil && res.Broken, attempts)
	}
}

// linkAnnotate sets a link Secret's cluster annotation in c.
func linkAnnotate(t *testing.T, c *cluster.Cluster, name, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"networking.istio.io/cluster":%q}}}`, value)
	if _, err := c.Kube.CoreV1().Secrets("istio-system").Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// linkClusterUID is the kube-system Namespace's UID: upstream's default cluster ID.
func linkClusterUID(t *testing.T, c *cluster.Cluster) string {
	t.Helper()
	ns, err := c.Kube.CoreV1().Namespaces().Get(context.Background(), "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(ns.UID)
}
