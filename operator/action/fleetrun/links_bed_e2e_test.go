package fleetrun_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kubeflags"
	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/operator/lock"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// linkVersion is the istioctl version the actions are given, as a command gives its own.
const linkVersion = "1.31.0"

// linkRig runs the link actions against the contexts of a bed, as the commands do, and
// keeps everything they returned or emitted (what a printer could print: results, plans,
// events, warnings, errors) to prove no credential is ever in it, and every token the
// clusters issued.
type linkRig struct {
	t    *testing.T
	bed  *cluster.Bed
	said *harness.Said
}

func newLinkRig(t *testing.T, n int) *linkRig {
	return &linkRig{t: t, bed: cluster.GetBed(t, n), said: &harness.Said{}}
}

// with is l for a subtest.
func (l *linkRig) with(t *testing.T) *linkRig {
	return &linkRig{t: t, bed: l.bed, said: l.said}
}

// record keeps what a run gave, each value as a printer would get it (JSON; an error's or
// a string's text); allowed says it may hold a credential.
func (l *linkRig) record(allowed bool, vs ...any) { l.said.Record(l.t, allowed, vs...) }

// Emit records an event of a run (linkRig is the runs' event sink).
func (l *linkRig) Emit(e event.Event) { l.record(false, e) }

func (l *linkRig) member(ctx string) *cluster.Cluster {
	for _, c := range l.bed.Clusters {
		if c.Context == ctx {
			return c
		}
	}
	l.t.Fatalf("no bed member %s", ctx)
	return nil
}

// config is what a command run with --context ctx gives the actions.
func (l *linkRig) config(ctx string) *action.Config {
	return &action.Config{Kube: &kubeflags.Flags{Kubeconfig: l.bed.Kubeconfig, Context: ctx, Timeout: kubeflags.DefaultTimeout},
		Version: linkVersion, Warn: func(w string) { l.record(false, w) }}
}

// linkSpec is the spec of a named cluster of the mesh: verify-install checks against it.
func linkSpec(name string) spec.Options {
	return spec.Options{Sets: []string{"values.global.multiCluster.clusterName=" + name, "values.global.meshID=mesh1", "values.global.network=network1"}}
}

// install installs the named cluster's spec into ctx, as install -y does.
func (l *linkRig) install(ctx string) {
	l.t.Helper()
	in := &action.Install{Config: l.config(ctx), Spec: linkSpec(ctx), ReadinessTimeout: 2 * time.Minute, Events: l}
	res, err := in.Run(context.Background(), nil)
	l.record(false, res, err)
	if err != nil {
		l.t.Fatalf("installing %s: %v", ctx, err)
	}
}

// createSecret runs create-remote-secret in context from with the flags' defaults and
// what set changes.
func (l *linkRig) createSecret(from string, set func(*action.CreateRemoteSecret)) (*action.RemoteSecretPlan, *action.RemoteSecretResult, error) {
	l.t.Helper()
	a := &action.CreateRemoteSecret{Config: l.config(from), Type: action.SecretTypeRemote, AuthType: action.AuthBearerToken,
		CreateServiceAccount: true, AuthPluginConfig: map[string]string{}}
	if set != nil {
		set(a)
	}
	ctx := context.Background()
	plan, err := a.Plan(ctx)
	l.record(false, plan, err)
	if err != nil {
		return plan, nil, err
	}
	res, err := a.Run(ctx, plan)
	// Without ApplyTo the Secret is the command's output, credentials included.
	l.record(a.ApplyTo == "", res)
	l.record(false, err)
	return plan, res, err
}

// applyLink writes cluster from's link into cluster into (--name from --apply-to into).
func (l *linkRig) applyLink(from, into string) *action.RemoteSecretResult {
	l.t.Helper()
	_, res, err := l.createSecret(from, func(a *action.CreateRemoteSecret) { a.Name, a.ApplyTo = from, into })
	if err != nil {
		l.t.Fatalf("linking %s into %s: %v", from, into, err)
	}
	return res
}

// remoteClusters runs remote-clusters in ctx.
func (l *linkRig) remoteClusters(ctx string) *action.RemoteClustersResult {
	l.t.Helper()
	res, err := (&action.RemoteClusters{Config: l.config(ctx), Timeout: 2 * time.Minute}).Run(context.Background())
	l.record(false, res, err)
	if err != nil {
		l.t.Fatalf("remote-clusters in %s: %v", ctx, err)
	}
	return res
}

// verify runs verify-install in ctx against its spec.
func (l *linkRig) verify(ctx string, cfg *action.Config) *action.CheckResult {
	l.t.Helper()
	v := action.Verify(cfg)
	opts := linkSpec(ctx)
	v.Spec = &opts
	res, err := v.Run(context.Background())
	l.record(false, res, err)
	if err != nil {
		l.t.Fatalf("verify-install in %s: %v", ctx, err)
	}
	return res
}

// linkSays says whether a result of rep that did not pass says want (its message or hint).
func linkSays(rep *check.Report, want string) bool {
	for _, r := range rep.Results {
		if !r.Passed && strings.Contains(r.Message+"\n"+r.Hint, want) {
			return true
		}
	}
	return false
}

// mustWork checks that remote-clusters in ctx finds no broken link.
func (l *linkRig) mustWork(ctx string) {
	l.t.Helper()
	if res := l.remoteClusters(ctx); res.Broken {
		l.t.Errorf("remote-clusters in %s finds a broken link: %s", ctx, linkFailures(res.Report))
	}
}

// broken checks that remote-clusters and verify-install in ctx fail (exit 1) saying want.
func (l *linkRig) broken(ctx, want string) {
	l.t.Helper()
	if res := l.remoteClusters(ctx); !res.Broken || !linkSays(res.Report, want) {
		l.t.Errorf("remote-clusters in %s: broken %v, want a failure saying %q: %s", ctx, res.Broken, want, linkFailures(res.Report))
	}
	if res := l.verify(ctx, l.config(ctx)); !res.Failed || !linkSays(res.Report, want) {
		l.t.Errorf("verify-install in %s: failed %v, want a failure saying %q: %s", ctx, res.Failed, want, linkFailures(res.Report))
	}
}

// linkFailures lists a report's failed results, for a test's message.
func linkFailures(rep *check.Report) string {
	var out []string
	for _, r := range rep.Results {
		if !r.Passed {
			out = append(out, fmt.Sprintf("%s %s: %s (%s)", r.Severity, r.Object, r.Message, r.Hint))
		}
	}
	return strings.Join(out, "; ")
}

// collectTokens remembers every ServiceAccount token the bed's istio namespaces hold now.
func (l *linkRig) collectTokens() { l.said.CollectTokens(l.t, l.bed) }

// linkSecret reads the link Secret name in context ctx.
func (l *linkRig) linkSecret(ctx, name string) *corev1.Secret {
	l.t.Helper()
	s, err := l.member(ctx).Kube.CoreV1().Secrets("istio-system").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		l.t.Fatalf("reading Secret istio-system/%s in %s: %v", name, ctx, err)
	}
	return s
}

// purgeBed removes what the test installed and linked, so each run and every later test
// of the shared bed starts clean.
func (l *linkRig) purgeBed() {
	l.t.Helper()
	for _, c := range l.bed.Clusters {
		purge := &action.Uninstall{Config: l.config(c.Context), Purge: true, Timeout: 2 * time.Minute}
		if _, err := purge.Run(context.Background(), nil); err != nil {
			l.t.Errorf("purging %s: %v", c.Context, err)
		}
		harness.ClearLinks(c)
	}
}

// linkClusterz is what c's real istiod lists at /debug/clusterz (read through its Service,
// not by istioctl), one "id secret status" line per cluster, sorted.
func linkClusterz(c *cluster.Cluster) ([]string, error) {
	svc, err := c.Kube.CoreV1().Services("istio-system").Get(context.Background(), "istiod", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Timeout: 3 * time.Second}).Get("http://" + net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(15014)) + "/debug/clusterz")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, errors.Join(fmt.Errorf("GET /debug/clusterz: %s", resp.Status), err)
	}
	list, err := link.ParseClusterz(body)
	if err != nil {
		return nil, fmt.Errorf("/debug/clusterz: %w", err)
	}
	var out []string
	for _, e := range list {
		out = append(out, strings.Join([]string{e.ID, e.SecretName, e.SyncStatus}, " "))
	}
	sort.Strings(out)
	return out, nil
}

// linkIstiodLists waits until c's istiod lists exactly want (clusterz's lines).
func linkIstiodLists(t *testing.T, c *cluster.Cluster, timeout time.Duration, want ...string) {
	t.Helper()
	sort.Strings(want)
	harness.Eventually(t, timeout, c.Context+"'s istiod lists "+strings.Join(want, ", "), func() (bool, string) {
		got, err := linkClusterz(c)
		return err == nil && slices.Equal(got, want), fmt.Sprintf("it lists %q (%v)", got, err)
	})
}

// sameAsIstiod checks that remote-clusters in ctx gives what its istiod lists, naming the
// istiod pods that run.
func (l *linkRig) sameAsIstiod(ctx string, res *action.RemoteClustersResult) {
	l.t.Helper()
	want, err := linkClusterz(l.member(ctx))
	if err != nil {
		l.t.Fatalf("%s's istiod: %v", ctx, err)
	}
	var rows, pods []string
	for _, r := range res.Rows {
		rows = append(rows, strings.Join([]string{r.Name, r.Secret, r.Status}, " "))
		if !slices.Contains(pods, r.Istiod) {
			pods = append(pods, r.Istiod)
		}
	}
	sort.Strings(rows)
	if !slices.Equal(rows, want) {
		l.t.Errorf("remote-clusters in %s gives\n  %s\nits istiod lists\n  %s", ctx, strings.Join(rows, "\n  "), strings.Join(want, "\n  "))
	}
	list, err := l.member(ctx).Kube.CoreV1().Pods("istio-system").List(context.Background(), metav1.ListOptions{LabelSelector: "app=istiod"})
	if err != nil {
		l.t.Fatal(err)
	}
	var running []string
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			running = append(running, p.Name)
		}
	}
	if !slices.Equal(pods, running) {
		l.t.Errorf("remote-clusters in %s names the istiods %v, the running ones are %v", ctx, pods, running)
	}
}

// linkHoldLock takes c's cluster lock as another istioctl would, released when the test ends.
func linkHoldLock(t *testing.T, c *cluster.Cluster) lock.Holder {
	t.Helper()
	self := lock.Self("istioctl upgrade", "install", "default", "istio-system", "demo", linkVersion)
	held, err := (&lock.Locker{Leases: c.Kube.CoordinationV1(), Self: self}).Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = held.Release() })
	return self
}
