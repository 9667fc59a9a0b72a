package cmd_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		for _, tok := range harness.ServiceAccountTokens(l.t, c) {
			l.tokens[tok] = true
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

// The link helpers the fleet tests call by these names.
var (
	tokenOf       = harness.LinkToken
	authenticates = harness.Authenticates
	revoked       = harness.Revoked
)

// purgeBed removes what the test installed and linked, so each run and every later test
// of the shared bed starts clean.
func (l *linkBed) purgeBed() {
	l.t.Helper()
	for _, c := range l.bed.Clusters {
		if _, errOut, code := l.istioctl(c.Context, "uninstall", "--purge", "-y"); code != 0 {
			l.t.Errorf("purging %s: %s", c.Context, errOut)
		}
		harness.ClearLinks(c)
	}
}
