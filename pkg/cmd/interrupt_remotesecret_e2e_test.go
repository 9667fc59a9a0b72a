package cmd_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/istioctl-installer/istioctl/operator/lock"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestInterruptRemoteSecretE2E: create-remote-secret --apply-to stopped by SIGINT between
// the token it mints and the Secret it writes, once creating the link and once rotating
// it. The test holds the target's cluster lock, which the write needs, and sends the SIGINT
// when the token Secret appears (a watch of cluster-1's Secrets), so the run is always in
// between. Each stopped run exits 130, leaves no token Secret it made and the target's
// Secret as it was (none; the previous token, which still authenticates); the same command
// again, the lock free, converges: one token Secret for the target, the one the Secret
// carries, which authenticates.
func TestInterruptRemoteSecretE2E(t *testing.T) {
	bed := cluster.GetBed(t, 3)
	src, dst := bed.Clusters[0], bed.Clusters[1]
	clear := func() { harness.ClearLinks(src); harness.ClearLinks(dst) }
	clear()
	t.Cleanup(clear)
	x := harness.Istioctl{T: t, Kubeconfig: bed.Kubeconfig, Context: src.Context, Bin: harness.BuildIstioctl(t, ""), Env: []string{"HOME=" + t.TempDir()}}
	args := []string{"create-remote-secret", "--name", src.Context, "--apply-to", dst.Context}
	ctx := context.Background()
	secrets := src.Kube.CoreV1().Secrets("istio-system")
	tokenSel := metav1.ListOptions{LabelSelector: ownership.LabelTokenFor}
	tokens := func() []corev1.Secret {
		t.Helper()
		list, err := secrets.List(ctx, tokenSel)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return list.Items
	}
	link := func() *corev1.Secret {
		t.Helper()
		s, err := dst.Kube.CoreV1().Secrets("istio-system").Get(ctx, "istio-remote-secret-"+src.Context, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// converged: one token Secret made for the target, the one the link carries, which
	// authenticates.
	converged := func(when string) string {
		t.Helper()
		s := link()
		if s == nil {
			t.Fatalf("%s: no link Secret in %s", when, dst.Context)
		}
		tok := harness.LinkToken(t, s, src.Context)
		ts := tokens()
		if len(ts) != 1 || string(ts[0].Data[corev1.ServiceAccountTokenKey]) != tok {
			names := make([]string, len(ts))
			for i := range ts {
				names[i] = ts[i].Name
			}
			t.Errorf("%s: token Secrets made for %s: %v, want one, the link's", when, dst.Context, names)
		}
		if !harness.Authenticates(t, src, tok) {
			t.Errorf("%s: the link's token does not authenticate", when)
		}
		return tok
	}
	interrupted := func(when string) {
		t.Helper()
		had := map[string]bool{}
		for _, s := range tokens() {
			had[s.Name] = true
		}
		w, err := secrets.Watch(ctx, tokenSel)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		held, err := (&lock.Locker{Leases: dst.Kube.CoordinationV1(), Self: lock.Self("istioctl upgrade", "install", "default", "istio-system", "demo", "1.30.0")}).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = held.Release() }()
		start := time.Now()
		p := x.Start("create-remote-secret "+when, args...)
		minted := ""
		for minted == "" {
			select {
			case e, ok := <-w.ResultChan():
				if !ok {
					t.Fatalf("%s: the watch of token Secrets ended", when)
				}
				if s, isSecret := e.Object.(*corev1.Secret); isSecret && e.Type == watch.Added && !had[s.Name] {
					minted = s.Name
				}
			case <-p.Exited():
				t.Fatalf("%s: exited (%d) before it minted a token:\n%s\n%s", when, p.Code(), p.Out, p.ErrOut)
			case <-time.After(2 * time.Minute):
				t.Fatalf("%s: no token minted in 2 minutes:\n%s\n%s", when, p.Out, p.ErrOut)
			}
		}
		if err := p.Cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		code := p.Wait(t, 2*time.Minute)
		t.Logf("%s: token %s minted, SIGINT, exit %d; %v in all", when, minted, code, time.Since(start).Round(time.Millisecond))
		if code != 130 {
			t.Errorf("%s: exit %d, want 130\n%s\n%s", when, code, p.Out, p.ErrOut)
		}
		if _, err := secrets.Get(ctx, minted, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the token Secret %s the stopped run minted is still there (%v)", when, minted, err)
		}
	}

	interrupted("creating the link")
	if s := link(); s != nil {
		t.Errorf("creating the link: a stopped run wrote Secret %s", s.Name)
	}
	if ts := tokens(); len(ts) != 0 {
		t.Errorf("creating the link: %d token Secrets left by the stopped run", len(ts))
	}
	x.MustRun(args...)
	first := converged("created again")

	before := link().ResourceVersion
	interrupted("rotating the token")
	if s := link(); s == nil || s.ResourceVersion != before {
		t.Errorf("rotating the token: the stopped run changed the link Secret")
	}
	if got := converged("after the stopped rotation"); got != first {
		t.Errorf("after the stopped rotation: the link's token changed")
	}
	x.MustRun(args...)
	if got := converged("rotated again"); got == first {
		t.Errorf("rotated again: the link's token did not change")
	}
}
