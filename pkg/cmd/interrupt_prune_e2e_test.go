package cmd_test

import (
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// stoppingLine is what istioctl prints on stderr once the first Ctrl-C has stopped the run.
const stoppingLine = "Stopping at a safe point"

// TestInterruptPruneE2E: SIGINT at the first pruned event of an install over a larger one
// (minimal over demo with CNI: the egress gateway, the ingress gateway and CNI are stale,
// pruned in that order, a batch each). The run talks through a proxy that holds the second
// batch's deletes (the ingress gateway's) until the run says it is stopping, so the SIGINT
// lands inside the prune whatever the load: inside that batch, or between the first two
// batches when the signal is read before the second starts (no delete is held then; the done
// event's "interrupted while pruning" is what proves the moment). The run exits 130 with an interrupted done, no
// CNI object was deleted (its batch never started), the newest install record says
// interrupted, and the same install again converges: every stale object is gone.
func TestInterruptPruneE2E(t *testing.T) {
	c := cluster.Get(t)
	bin := harness.BuildIstioctl(t, "")
	env := []string{"HOME=" + t.TempDir()}
	x := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig, Bin: bin, Env: env}
	x.PurgeAtEnd()
	start := time.Now()
	x.MustRun("install", "-y", "--set", "profile=demo", "--set", "components.cni.enabled=true")
	t.Logf("the larger install: %v", time.Since(start).Round(time.Millisecond))
	staleComponents := map[string]bool{"EgressGateways": true, "IngressGateways": true, "Cni": true}
	stale := map[string]string{} // object → component
	for id, o := range harness.Objects(t, c) {
		if l := o.GetLabels(); l[ownership.LabelManaged] == "Reconcile" && staleComponents[l[ownership.LabelComponent]] {
			stale[id] = l[ownership.LabelComponent]
		}
	}
	for comp := range staleComponents {
		if !containsValue(stale, comp) {
			t.Fatalf("the larger install has no %s object: %v", comp, stale)
		}
	}

	stopping := make(chan struct{})
	var held atomic.Int32
	proxied := harness.Proxy(t, c, func(r *http.Request) {
		if r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "ingressgateway") {
			held.Add(1)
			<-stopping
		}
	}, nil)
	p := harness.Istioctl{T: t, Kubeconfig: proxied, Bin: bin, Env: env}.Start("install minimal", "install", "-y", "--set", "profile=minimal", "-o", "json")
	p.WaitFor(t, "the first pruned event", p.Out.When(func(l string) bool { return strings.Contains(l, `"type":"pruned"`) }))
	if err := p.Cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(t, "the stop", p.ErrOut.When(func(l string) bool { return strings.Contains(l, stoppingLine) }))
	close(stopping)
	code := p.Wait(t, 5*time.Minute)
	out := p.Out.String()
	if code != 130 {
		t.Fatalf("install interrupted in its prune: exit %d, want 130\n%s\n%s", code, out, p.ErrOut)
	}

	// The stream: pruned events of stale objects only, none of CNI's, then the done.
	type ev struct {
		Type, Object, Status, Error string
		ExitCode                    *int
	}
	evs := harness.Events[ev](t, out)
	var pruned []string
	sawDone := false
	for i, e := range evs {
		switch e.Type {
		case "pruned":
			comp, ok := stale[e.Object]
			switch {
			case !ok:
				t.Errorf("pruned %s, which was not stale", e.Object)
			case comp == "Cni":
				t.Errorf("pruned %s after the SIGINT: CNI's batch came after the stop", e.Object)
			}
			pruned = append(pruned, e.Object)
		case "done":
			sawDone = true
			if i != len(evs)-1 || e.Status != "interrupted" || e.ExitCode == nil || *e.ExitCode != 130 ||
				!strings.Contains(e.Error, "interrupted while pruning") || !strings.Contains(e.Error, "Run the same install again") {
				t.Errorf("done event %d of %d: %+v, want the last, interrupted while pruning, exit code 130", i+1, len(evs), e)
			}
		}
	}
	if !sawDone {
		t.Errorf("no done event:\n%s", out)
	}
	left := harness.Objects(t, c)
	var remaining []string
	for id, comp := range stale {
		if _, ok := left[id]; ok {
			remaining = append(remaining, id)
		} else if comp == "Cni" {
			t.Errorf("%s is gone, but CNI's batch never started", id)
		}
	}
	sort.Strings(remaining)
	t.Logf("%d stale objects; %d pruned before the stop (%d deletes held); %d left: %s", len(stale), len(pruned), held.Load(), len(remaining), strings.Join(remaining, " "))
	harness.NoStuckWebhooks(t, c, ownership.LabelComponent)

	rs := historyOf(t, c.Kubeconfig)
	if last := rs[len(rs)-1]; last.Outcome != history.Interrupted || !strings.Contains(last.Description, "interrupted while pruning") {
		t.Errorf("the newest install record: %s %q, want interrupted while pruning", last.Outcome, last.Description)
	}

	start = time.Now()
	if out := x.MustOutput("install", "-y", "--set", "profile=minimal"); !strings.Contains(out, "✔ Installation complete") {
		t.Fatalf("the install after the interrupted one:\n%s", out)
	}
	t.Logf("the install again: %v", time.Since(start).Round(time.Millisecond))
	after := harness.Objects(t, c)
	for id := range stale {
		if _, ok := after[id]; ok {
			t.Errorf("%s is still there after the install converged", id)
		}
	}
	rs = historyOf(t, c.Kubeconfig)
	if last := rs[len(rs)-1]; last.Outcome != history.Succeeded {
		t.Errorf("the newest install record after the re-run: %s %q", last.Outcome, last.Description)
	}
	x.MustRun("verify-install")
}

func containsValue(m map[string]string, v string) bool {
	for _, w := range m {
		if w == v {
			return true
		}
	}
	return false
}
