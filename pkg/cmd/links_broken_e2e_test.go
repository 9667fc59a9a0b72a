package cmd_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/pki"
)

var authnReview = authenticationv1.SelfSubjectReview{}

// brokenLinks breaks cluster-1's link to cluster-2 in each way users hit, and checks that
// remote-clusters and verify-install name the link and the cause and exit 1, and pass
// again once it is repaired (once while remote-clusters --wait waits).
func brokenLinks(outer *testing.T, top *linkBed, spec []string) {
	// The closures below fail the subtest running them.
	t, l := outer, top
	ctx := context.Background()
	c1, c2 := l.member("cluster-1"), l.member("cluster-2")
	secrets1 := c1.Kube.CoreV1().Secrets("istio-system")
	relink := func() {
		l.must("cluster-2", "create-remote-secret", "--name", "cluster-2", "--apply-to", "cluster-1")
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
	other := c1.Namespace(outer)
	for _, tc := range []struct {
		name, want   string
		breakIt, fix func()
	}{
		{"reader token deleted", "rejects the credentials (401 Unauthorized)", func() {
			uid := clusterUID(t, c1)
			if err := c2.Kube.CoreV1().Secrets("istio-system").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "install.istio.io/remote-secret-for=" + uid}); err != nil {
				t.Fatal(err)
			}
			if !revoked(t, c2, tokenOf(t, l.linkSecret("cluster-1", "istio-remote-secret-cluster-2"), "cluster-2")) {
				t.Fatal("the link's token still authenticates with its token Secret deleted")
			}
		}, relink},
		{"reader ClusterRoleBinding removed", "may do none of the", func() {
			if err := c2.Kube.RbacV1().ClusterRoleBindings().Delete(ctx, "istio-reader-clusterrole-istio-system", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, nil}, // repaired while remote-clusters --wait waits, below
		{"wrong cluster ID in the annotation", `annotation says "cluster-9" but its data key`, func() {
			l.patchAnnotation("cluster-1", "istio-remote-secret-cluster-2", "cluster-9")
		}, func() { l.patchAnnotation("cluster-1", "istio-remote-secret-cluster-2", "cluster-2") }},
		{"cluster ID is not the cluster's name", `that cluster calls itself "cluster-2"`, func() {
			l.must("cluster-2", "create-remote-secret", "--name", "cluster-x", "--apply-to", "cluster-1")
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
			_, errOut, code := l.istioctl("cluster-2", "create-remote-secret", "--name", "cluster-2", "--apply-to", "cluster-1")
			if code != 1 || !strings.Contains(errOut, "Secret istio-system/cluster-2-by-hand there already carries cluster ID cluster-2") {
				t.Errorf("--apply-to next to a second Secret for the cluster ID: exit %d\n%s", code, errOut)
			}
		}, deleteSecret("istio-system", "cluster-2-by-hand")},
	} {
		outer.Run(tc.name, func(st *testing.T) {
			t, l = st, top.with(st)
			tc.breakIt()
			l.broken("cluster-1", tc.want, "remote-clusters")
			l.broken("cluster-1", tc.want, append([]string{"verify-install"}, spec...)...)
			if tc.fix == nil {
				waitRepaired(t, l, relink)
				return
			}
			tc.fix()
			l.must("cluster-1", "remote-clusters")
		})
	}
}

// waitRepaired runs remote-clusters --wait on a broken link and repairs it meanwhile: the
// wait must see it broken first, then pass.
func waitRepaired(t *testing.T, l *linkBed, repair func()) {
	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code := l.istioctl("cluster-1", "remote-clusters", "--wait", "--timeout", "90s")
		done <- result{out, errOut, code}
	}()
	time.Sleep(3 * time.Second)
	repair()
	r := <-done
	if r.code != 0 || !strings.Contains(r.errOut, "(attempt 1); checking again") {
		t.Errorf("remote-clusters --wait: exit %d, want 0 after a failed attempt\n%s\n%s", r.code, r.out, r.errOut)
	}
}

// clusterUID is the kube-system Namespace's UID: upstream's default cluster ID.
func clusterUID(t *testing.T, c *cluster.Cluster) string {
	t.Helper()
	ns, err := c.Kube.CoreV1().Namespaces().Get(context.Background(), "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(ns.UID)
}

// remoteSecretNorm normalises create-remote-secret's output as the golden comparison
// allows: the token, the CA data, the server URL's port and the kube-system UID.
func remoteSecretNorm(out, uid string) string {
	out = regexp.MustCompile(`(token|certificate-authority-data): \S+`).ReplaceAllString(out, "$1: REDACTED")
	out = regexp.MustCompile(`(server: https://[^:\s]+):\d+`).ReplaceAllString(out, "$1:PORT")
	if uid == "" {
		return out
	}
	return strings.ReplaceAll(out, uid, "KUBE-SYSTEM-UID")
}

// upstreamGolden compares our create-remote-secret's stdout with upstream istioctl's for
// the same inputs on the bed. ISTIOCTL_RECORD_UPSTREAM=1 records the goldens with
// bin/upstream/istioctl (make bench-spec installs it) instead.
func upstreamGolden(t *testing.T, l *linkBed) {
	record := os.Getenv("ISTIOCTL_RECORD_UPSTREAM") == "1"
	for _, tc := range []struct {
		name, ctx string
		args      []string
	}{
		{"name", "cluster-3", []string{"--name", "cluster-3"}},
		{"default-name", "cluster-3", nil},
		{"config", "cluster-1", []string{"--type", "config", "--name", "cluster-1"}},
		{"plugin", "cluster-3", []string{"--name", "cluster-3", "--auth-type", "plugin", "--auth-plugin-name", "gcp"}},
		{"server", "cluster-3", []string{"--name", "cluster-3", "--server", "https://192.0.2.200:6443", "--tls-server-name", "api.cluster-3.test"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := l.with(t)
			path := "../../testdata/multicluster/create-remote-secret-" + tc.name + ".yaml"
			uid := clusterUID(t, l.member(tc.ctx))
			args := append([]string{"create-remote-secret"}, tc.args...)
			if record {
				cmd := exec.Command("../../bin/upstream/istioctl", append([]string{"--kubeconfig", l.bed.Kubeconfig, "--context", tc.ctx}, args...)...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("upstream istioctl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(remoteSecretNorm(string(out), uid)), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			out, errOut, code := l.istioctl(tc.ctx, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden.Check(t, path, []byte(remoteSecretNorm(out, uid)))
			if loopback := tc.name != "server"; loopback != strings.Contains(errOut, "likely not reachable from inside the cluster") {
				t.Errorf("loopback warning (want %v): %s", loopback, errOut)
			}
		})
	}
	if record {
		return
	}
	t.Run("auth plugin config", func(t *testing.T) {
		// Upstream never reads --auth-plugin-config's value (its flag is bound to a copy):
		// config stays {}. Ours writes it.
		out := l.with(t).must("cluster-3", "create-remote-secret", "--name", "cluster-3", "--auth-type", "plugin", "--auth-plugin-name", "gcp", "--auth-plugin-config", "scopes=cloud")
		if !strings.Contains(out, "config:\n            scopes: cloud\n          name: gcp") {
			t.Errorf("--auth-plugin-config is not in the kubeconfig:\n%s", out)
		}
	})
	t.Run("context namespace and kubeconfig CA", func(t *testing.T) {
		l := l.with(t)
		raw, err := clientcmd.LoadFromFile(l.bed.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		// The trap of upstream #49780: a context namespace must not move the Secret.
		raw.Contexts["cluster-3"].Namespace = "default"
		// Upstream #51376: the CA the kubeconfig trusts (here a bundle with one more CA)
		// is the one written, not the token Secret's.
		bundle := append(append([]byte{}, raw.Clusters[raw.Contexts["cluster-3"].Cluster].CertificateAuthorityData...), pki.New(t, pki.Valid).RootPEM...)
		raw.Clusters[raw.Contexts["cluster-3"].Cluster].CertificateAuthorityData = bundle
		path := filepath.Join(t.TempDir(), "kubeconfig")
		if err := clientcmd.WriteToFile(*raw, path); err != nil {
			t.Fatal(err)
		}
		out, errOut, err := harness.Run(t, "--kubeconfig", path, "--context", "cluster-3", "create-remote-secret", "--name", "cluster-3")
		l.record(true, out, errOut)
		if err != nil {
			t.Fatalf("%v: %s", err, errOut)
		}
		golden.Check(t, "../../testdata/multicluster/create-remote-secret-name.yaml", []byte(remoteSecretNorm(out, "")))
		if !strings.Contains(out, base64.StdEncoding.EncodeToString(bundle)) || !strings.Contains(errOut, "the CA written is the one your kubeconfig trusts") {
			t.Errorf("the kubeconfig's CA bundle is not the one written:\n%s", errOut)
		}
	})
}
