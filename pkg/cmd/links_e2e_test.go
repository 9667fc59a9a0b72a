package cmd_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// linkBed runs istioctl against the contexts of a bed, keeps every output of every run
// (to prove no credential is ever printed) and every token the clusters issued.
type linkBed struct {
	t   *testing.T
	bed *cluster.Bed
	*seen
}

// seen is what every run of a test showed, shared by its subtests.
type seen struct {
	mu   sync.Mutex
	outs []string
	// allowed are outputs that may hold a credential: create-remote-secret's stdout
	// without --apply-to, which prints the Secret as upstream does.
	allowed map[int]bool
	tokens  map[string]bool
}

// with is l for a subtest.
func (l *linkBed) with(t *testing.T) *linkBed { return &linkBed{t: t, bed: l.bed, seen: l.seen} }

// record keeps the outputs of one run; allowed says they may hold a credential.
func (l *linkBed) record(allowed bool, outs ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if allowed {
		l.allowed[len(l.outs)] = true
	}
	l.outs = append(l.outs, outs...)
}

func (l *linkBed) member(ctx string) *cluster.Cluster {
	for _, c := range l.bed.Clusters {
		if c.Context == ctx {
			return c
		}
	}
	l.t.Fatalf("no bed member %s", ctx)
	return nil
}

// istioctl runs a command against context ctx and returns stdout, stderr and the exit
// code main would give (0, 1 for a failure, 64 for a bad command line).
func (l *linkBed) istioctl(ctx string, args ...string) (string, string, int) {
	l.t.Helper()
	r := harness.Istioctl{T: l.t, Kubeconfig: l.bed.Kubeconfig, Context: ctx}.Run(args...)
	// What main would print: errors are outputs too.
	out, errOut := r.Stdout, r.Stderr+r.ErrorLine()
	l.record(args[0] == "create-remote-secret" && !strings.Contains(strings.Join(args, " "), "--apply-to"), out, errOut)
	return out, errOut, r.Code
}

// must runs a command that has to succeed.
func (l *linkBed) must(ctx string, args ...string) string {
	l.t.Helper()
	out, errOut, code := l.istioctl(ctx, args...)
	if code != 0 {
		l.t.Fatalf("istioctl --context %s %s: exit %d\n%s\n%s", ctx, strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// broken runs a command that has to exit 1 and say want.
func (l *linkBed) broken(ctx, want string, args ...string) {
	l.t.Helper()
	out, errOut, code := l.istioctl(ctx, args...)
	if code != 1 || !strings.Contains(out+errOut, want) {
		l.t.Errorf("istioctl --context %s %s: exit %d, want 1 saying %q\n%s\n%s", ctx, strings.Join(args, " "), code, want, out, errOut)
	}
}

// collectTokens remembers every ServiceAccount token the bed's istio namespaces hold now.
func (l *linkBed) collectTokens() {
	l.t.Helper()
	for _, c := range l.bed.Clusters {
		list, err := c.Kube.CoreV1().Secrets("istio-system").List(context.Background(), metav1.ListOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			l.t.Fatal(err)
		}
		for _, s := range list.Items {
			if tok := s.Data[corev1.ServiceAccountTokenKey]; len(tok) > 0 {
				l.tokens[string(tok)] = true
			}
		}
	}
}

// linkSecret reads the link Secret name in context ctx.
func (l *linkBed) linkSecret(ctx, name string) *corev1.Secret {
	l.t.Helper()
	s, err := l.member(ctx).Kube.CoreV1().Secrets("istio-system").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		l.t.Fatalf("reading Secret istio-system/%s in %s: %v", name, ctx, err)
	}
	return s
}

// tokenOf is the bearer token in a link Secret's kubeconfig for cluster id.
func tokenOf(t *testing.T, s *corev1.Secret, id string) string {
	t.Helper()
	cfg, err := clientcmd.Load(s.Data[id])
	if err != nil {
		t.Fatalf("Secret %s key %s: %v", s.Name, id, err)
	}
	return cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo].Token
}

// authenticates says whether token authenticates at the apiserver of c.
func authenticates(t *testing.T, c *cluster.Cluster, token string) bool {
	t.Helper()
	cfg := rest.AnonymousClientConfig(c.Config)
	cfg.BearerToken = token
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = kc.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authnReview, metav1.CreateOptions{})
	if err != nil && !apierrors.IsUnauthorized(err) {
		t.Fatalf("asking who the token is: %v", err)
	}
	return err == nil
}

// revoked waits until token no longer authenticates at c: the apiserver caches a token's
// successful authentication for a few seconds (10 s by default), so a deleted token Secret
// revokes its token only then.
func revoked(t *testing.T, c *cluster.Cluster, token string) bool {
	t.Helper()
	return harness.Within(30*time.Second, time.Second, func() (bool, string) { return !authenticates(t, c, token), "" }) == nil
}

// purgeBed removes what the test installed and linked, so each run and every later test
// of the shared bed starts clean.
func (l *linkBed) purgeBed() {
	l.t.Helper()
	for _, c := range l.bed.Clusters {
		if _, errOut, code := l.istioctl(c.Context, "uninstall", "--purge", "-y"); code != 0 {
			l.t.Errorf("purging %s: %s", c.Context, errOut)
		}
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
		// A fleet's shared cacerts (uninstall --purge leaves a CA it did not declare).
		_ = secrets.Delete(ctx, "cacerts", metav1.DeleteOptions{})
	}
}

func TestLinksE2E(t *testing.T) {
	l := &linkBed{t: t, bed: cluster.GetBed(t, 3), seen: &seen{allowed: map[int]bool{}, tokens: map[string]bool{}}}
	l.purgeBed()
	t.Cleanup(l.purgeBed)
	// verify-install checks against the spec installed.
	spec := func(c string) []string {
		return []string{"--set", "values.global.multiCluster.clusterName=" + c, "--set", "values.global.meshID=mesh1", "--set", "values.global.network=network1"}
	}
	start := time.Now()
	for _, c := range []string{"cluster-1", "cluster-2"} {
		l.must(c, append([]string{"install", "-y"}, spec(c)...)...)
	}
	t.Logf("installed in %v", time.Since(start))

	t.Run("link both ways", func(t *testing.T) {
		l := l.with(t)
		out := l.must("cluster-2", "create-remote-secret", "--name", "cluster-2", "--apply-to", "cluster-1")
		for _, want := range []string{"Secret istio-system/istio-remote-secret-cluster-2 created in context cluster-1", "long-lived ServiceAccount token", "expires: never"} {
			if !strings.Contains(out, want) {
				t.Errorf("create-remote-secret --apply-to says\n%s\nwant %q", out, want)
			}
		}
		l.must("cluster-1", "create-remote-secret", "--name", "cluster-1", "--apply-to", "cluster-2")
		for _, pair := range [][2]string{{"cluster-1", "cluster-2"}, {"cluster-2", "cluster-1"}} {
			s := l.linkSecret(pair[0], "istio-remote-secret-"+pair[1])
			if s.Labels["istio/multiCluster"] != "true" || s.Annotations["networking.istio.io/cluster"] != pair[1] || len(s.Data) != 1 || s.Data[pair[1]] == nil {
				t.Errorf("Secret in %s: labels %v, annotations %v, keys %d", pair[0], s.Labels, s.Annotations, len(s.Data))
			}
			if !authenticates(t, l.member(pair[1]), tokenOf(t, s, pair[1])) {
				t.Errorf("the token in %s's Secret does not authenticate at %s", pair[0], pair[1])
			}
		}
		l.collectTokens()
	})

	t.Run("checks pass", func(t *testing.T) {
		l := l.with(t)
		for _, c := range []string{"cluster-1", "cluster-2"} {
			other := map[string]string{"cluster-1": "cluster-2", "cluster-2": "cluster-1"}[c]
			// The istiod itself (read through its Service, not by istioctl) reads the
			// Secret create-remote-secret wrote and syncs the other cluster.
			istiodLists(t, l.member(c), time.Minute, c+"  synced", other+" istio-system/istio-remote-secret-"+other+" synced")
			sameAsIstiod(t, l, c)
			out := l.must(c, "remote-clusters")
			// The cluster's real istiod answers: both clusters synced.
			for _, want := range []string{"NAME", "SECRET", "STATUS", "ISTIOD", "REVISION", "may do all", "reports synced"} {
				if !strings.Contains(out, want) {
					t.Errorf("remote-clusters on %s:\n%s\nwant %q", c, out, want)
				}
			}
			for _, row := range []*regexp.Regexp{
				regexp.MustCompile(`(?m)^` + c + `\s+synced\s+istiod-\S+\s+default$`),
				regexp.MustCompile(`(?m)^` + other + `\s+istio-system/istio-remote-secret-` + other + `\s+synced\s+istiod-\S+\s+default$`),
			} {
				if !row.MatchString(out) {
					t.Errorf("remote-clusters on %s lacks a row like %s:\n%s", c, row, out)
				}
			}
			out = l.must(c, append([]string{"verify-install"}, spec(c)...)...)
			if !strings.Contains(out, "Link to "+other) {
				t.Errorf("verify-install on %s runs no link check:\n%s", c, out)
			}
		}
		var doc struct {
			Clusters []map[string]string `json:"clusters"`
			Links    struct {
				Results []map[string]any `json:"results"`
			} `json:"links"`
		}
		if err := json.Unmarshal([]byte(l.must("cluster-1", "remote-clusters", "-o", "json")), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Clusters) != 2 || doc.Clusters[1]["name"] != "cluster-2" || doc.Clusters[1]["status"] != "synced" || len(doc.Links.Results) < 10 {
			t.Errorf("remote-clusters -o json: %+v", doc)
		}
		if got := l.must("cluster-1", "remote-clusters", "-o", "name"); got != "remotecluster/cluster-1\nremotecluster/cluster-2\n" {
			t.Errorf("-o name = %q", got)
		}
		if got := l.must("cluster-1", "remote-clusters", "-o", "custom-columns=NAME:.name,STATUS:.status"); !strings.Contains(got, "cluster-2   synced") {
			t.Errorf("-o custom-columns = %q", got)
		}
	})

	t.Run("secrets permission", func(t *testing.T) { secretsPermission(t, l.with(t), spec("cluster-1")) })

	t.Run("upstream output", func(t *testing.T) { upstreamGolden(t, l.with(t)) })

	t.Run("broken links", func(t *testing.T) { brokenLinks(t, l.with(t), spec("cluster-1")) })

	t.Run("rotation", func(t *testing.T) {
		l := l.with(t)
		c2 := l.member("cluster-2")
		old := tokenOf(t, l.linkSecret("cluster-1", "istio-remote-secret-cluster-2"), "cluster-2")
		out := l.must("cluster-2", "create-remote-secret", "--name", "cluster-2", "--apply-to", "cluster-1")
		if !strings.Contains(out, "updated in context cluster-1") || !strings.Contains(out, "deleted: it stops authenticating") {
			t.Errorf("a second --apply-to says\n%s", out)
		}
		l.collectTokens()
		fresh := tokenOf(t, l.linkSecret("cluster-1", "istio-remote-secret-cluster-2"), "cluster-2")
		if fresh == old {
			t.Fatal("the token did not change")
		}
		if !revoked(t, c2, old) {
			t.Error("the old token still authenticates")
		}
		if !authenticates(t, c2, fresh) {
			t.Error("the new token does not authenticate")
		}
		l.must("cluster-1", "remote-clusters")
	})

	t.Run("apply-to takes the target's lock", func(t *testing.T) {
		l := l.with(t)
		before := l.linkSecret("cluster-1", "istio-remote-secret-cluster-2").ResourceVersion
		tokens := func() int {
			list, err := l.member("cluster-2").Kube.CoreV1().Secrets("istio-system").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, s := range list.Items {
				if s.Type == corev1.SecretTypeServiceAccountToken {
					n++
				}
			}
			return n
		}
		had := tokens()
		_, holder := harness.HoldLock(t, l.member("cluster-1"))
		_, errOut, code := l.istioctl("cluster-2", "create-remote-secret", "--name", "cluster-2", "--apply-to", "cluster-1", "--lock-timeout", "0")
		if code != 3 || !strings.Contains(errOut, holder.String()) {
			t.Errorf("--apply-to into a cluster whose lock is held: exit %d, want 3 naming %q:\n%s", code, holder.String(), errOut)
		}
		if after := l.linkSecret("cluster-1", "istio-remote-secret-cluster-2").ResourceVersion; after != before {
			t.Errorf("the Secret was written without the lock: resourceVersion %s -> %s", before, after)
		}
		if n := tokens(); n != had {
			t.Errorf("token Secrets in cluster-2: %d before, %d after the refused run (its own token is not deleted again)", had, n)
		}
	})

	t.Run("uninstall with remote contexts", func(t *testing.T) {
		l := l.with(t)
		l.must("cluster-3", "create-remote-secret", "--name", "cluster-3", "--apply-to", "cluster-1")
		l.collectTokens()
		// cluster-3 is a remote: no istiod, its name only in its injector's path.
		remoteInjector(t, l)
		if out := l.must("cluster-1", "remote-clusters"); !strings.Contains(out, `the cluster's name is "cluster-3" (the injection path of MutatingWebhookConfiguration istio-sidecar-injector)`) {
			t.Errorf("remote-clusters does not read the remote's name from its injection path:\n%s", out)
		}
		names := func() []string {
			list, err := l.member("cluster-1").Kube.CoreV1().Secrets("istio-system").List(context.Background(), metav1.ListOptions{LabelSelector: "istio/multiCluster=true"})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, s := range list.Items {
				out = append(out, s.Name)
			}
			return out
		}
		dry := l.must("cluster-2", "uninstall", "-r", "default", "--remote-contexts", "cluster-1", "--dry-run")
		for _, want := range []string{"Secret/istio-system/istio-remote-secret-cluster-2 would be removed from context cluster-1",
			"Secret/istio-system/istio-remote-secret-cluster-1: stays"} {
			if !strings.Contains(dry, want) {
				t.Errorf("uninstall --dry-run:\n%s\nwant %q", dry, want)
			}
		}
		if got := strings.Join(names(), ","); got != "istio-remote-secret-cluster-2,istio-remote-secret-cluster-3" {
			t.Fatalf("before: cluster-1 holds %s", got)
		}
		l.must("cluster-2", "uninstall", "-r", "default", "--remote-contexts", "cluster-1", "-y", "-v")
		if got := strings.Join(names(), ","); got != "istio-remote-secret-cluster-3" {
			t.Errorf("after uninstalling cluster-2, cluster-1 holds %s, want only cluster-3's", got)
		}
		l.linkSecret("cluster-2", "istio-remote-secret-cluster-1") // its own stays
	})

	t.Run("no credential in any output", func(t *testing.T) {
		l := l.with(t)
		l.collectTokens()
		outs := append([]string{}, l.outs...)
		records := 0
		for _, c := range l.bed.Clusters {
			list, err := c.Kube.CoreV1().Secrets("istio-system").List(context.Background(), metav1.ListOptions{LabelSelector: "install.istio.io/record"})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range list.Items {
				records++
				for _, v := range r.Data {
					outs = append(outs, string(v))
				}
			}
		}
		if len(l.tokens) < 4 || records < 1 {
			t.Fatalf("only %d tokens and %d install records seen", len(l.tokens), records)
		}
		// The bed's own credentials: each admin's client key, as the kubeconfig holds it
		// and as PEM.
		creds := map[string]bool{}
		for tok := range l.tokens {
			creds[tok] = true
		}
		raw, err := clientcmd.LoadFromFile(l.bed.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range raw.AuthInfos {
			if len(u.ClientKeyData) > 0 {
				creds[base64.StdEncoding.EncodeToString(u.ClientKeyData)] = true
				lines := strings.Split(strings.TrimSpace(string(u.ClientKeyData)), "\n")
				creds[lines[len(lines)/2]] = true
			}
		}
		if len(creds) < len(l.tokens)+2 {
			t.Fatalf("the bed's kubeconfig holds no client keys")
		}
		for i, o := range outs {
			for c := range creds {
				if strings.Contains(o, c) && !l.allowed[i] {
					t.Errorf("output %d holds a credential:\n%s", i, o)
				}
			}
		}
	})
}

// patchAnnotation sets a link Secret's cluster annotation in context ctx.
func (l *linkBed) patchAnnotation(ctx, name, value string) {
	l.t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"networking.istio.io/cluster":%q}}}`, value)
	if _, err := l.member(ctx).Kube.CoreV1().Secrets("istio-system").Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		l.t.Fatal(err)
	}
}
