package action_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/action/fleetrun"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/lock"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// sent records the requests that reached the cluster and could change it (kube.Persists),
// each with whether it was made inside a run of the protocol (kube.HasWritePermit): the
// transport under the client's write guard, so it sees what the guard let through. The
// cluster lock's own requests (its Lease: the protocol's lock step, through the client's
// unguarded Config, so that a run can still release a lock it may have lost) are not the
// run's writes.
type sent struct {
	mu      sync.Mutex
	writes  []string
	outside []string
	dryRuns int
}

// via is one client's transport into sent.
type via struct {
	*sent
	next http.RoundTripper
}

func (v via) RoundTrip(r *http.Request) (*http.Response, error) {
	v.record(r)
	return v.next.RoundTrip(r)
}

func (v via) WrappedRoundTripper() http.RoundTripper { return v.next }

func (s *sent) record(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case strings.HasSuffix(r.URL.Path, "/namespaces/"+lock.Namespace+"/leases/"+lock.Name):
	case kube.Persists(r) && kube.HasWritePermit(r.Context()):
		s.writes = append(s.writes, r.Method+" "+r.URL.Path)
	case kube.Persists(r):
		s.outside = append(s.outside, r.Method+" "+r.URL.Path)
	case r.Method != http.MethodGet:
		s.dryRuns++
	}
}

// take returns what was sent since the last take.
func (s *sent) take() (writes, outside []string, dryRuns int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	writes, outside, dryRuns = s.writes, s.outside, s.dryRuns
	s.writes, s.outside, s.dryRuns = nil, nil, 0
	return writes, outside, dryRuns
}

// TestWritesOnlyInRunsE2E drives every writing action, dry runs included, through a client
// that refuses any write made outside a run of the plan-then-write protocol, and watches
// what reaches the cluster: each action that writes writes only inside its run, and a dry
// run sends no request that could change the cluster. A write outside a run, through the
// same client, is refused unsent.
func TestWritesOnlyInRunsE2E(t *testing.T) {
	c := purged(t)
	ctx := context.Background()
	rec := &sent{}
	var mu sync.Mutex
	var clients []*kube.Client
	cfg := config(c)
	cfg.NewClient = func() (*kube.Client, error) {
		rc := rest.CopyConfig(c.Config)
		rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { return via{rec, rt} })
		client, err := kube.NewClientForConfig(rc, ownership.KubeOptions()...)
		mu.Lock()
		clients = append(clients, client)
		mu.Unlock()
		return client, err
	}
	install := func(dryRun bool, sets ...string) *action.Install {
		return &action.Install{Config: cfg, Spec: spec.Options{Sets: append([]string{"profile=minimal"}, sets...)}, DryRun: dryRun, ReadinessTimeout: 2 * time.Minute}
	}
	broken := &action.Install{Config: cfg, Atomic: true, ReadinessTimeout: 6 * time.Second,
		Spec: spec.Options{Sets: []string{"profile=minimal", "components.pilot.k8s.nodeSelector.no-such-node=x"}}}
	fleetFile := filepath.Join(t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(fleetFile, []byte(`apiVersion: fleet.istioctl-installer.github.io/v1alpha1
kind: Fleet
metadata: {name: guard}
spec:
  meshID: mesh1
  istioOperator: {profile: minimal}
  clusters:
  - {name: only, context: `+c.Context+`, network: network1, role: primary}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	fleet := &fleetrun.Fleet{Config: cfg, File: fleetFile}

	for _, step := range []struct {
		name   string
		dryRun bool
		fails  bool
		run    func() error
	}{
		{"install (planned under the lock)", false, false, func() error { _, err := install(false).Run(ctx, nil); return err }},
		{"install dry run", true, false, func() error { _, err := install(true, "values.pilot.traceSampling=5").Run(ctx, nil); return err }},
		{"upgrade (planned, then run)", false, false, func() error {
			in := install(false, "values.pilot.traceSampling=5")
			p, err := in.Plan(ctx)
			if err == nil {
				_, err = in.Run(ctx, p)
			}
			return err
		}},
		{"rollback dry run", true, false, func() error { _, err := (&action.Rollback{Config: cfg, DryRun: true}).Run(ctx, nil); return err }},
		{"rollback", false, false, func() error {
			_, err := (&action.Rollback{Config: cfg, ReadinessTimeout: 2 * time.Minute}).Run(ctx, nil)
			return err
		}},
		{"install --atomic that fails and restores", false, true, func() error { _, err := broken.Run(ctx, nil); return err }},
		{"tag set dry run", true, false, func() error {
			_, err := (&action.TagSet{Config: cfg, Tag: "prod", Revision: "default", DryRun: true}).Run(ctx, nil)
			return err
		}},
		{"tag set", false, false, func() error {
			_, err := (&action.TagSet{Config: cfg, Tag: "prod", Revision: "default"}).Run(ctx, nil)
			return err
		}},
		{"tag remove", false, false, func() error { return (&action.TagRemove{Config: cfg, Tag: "prod"}).Run(ctx, nil) }},
		{"create-remote-secret", false, false, func() error {
			_, err := (&action.CreateRemoteSecret{Config: cfg, Name: "guard", CreateServiceAccount: true}).Run(ctx, nil)
			return err
		}},
		{"uninstall dry run", true, false, func() error {
			_, err := (&action.Uninstall{Config: cfg, Spec: spec.Options{Revision: "default"}, DryRun: true}).Run(ctx, nil)
			return err
		}},
		{"uninstall", false, false, func() error {
			_, err := (&action.Uninstall{Config: cfg, Spec: spec.Options{Revision: "default"}, Timeout: 2 * time.Minute}).Run(ctx, nil)
			return err
		}},
		{"install --atomic that fails and removes", false, true, func() error { _, err := broken.Run(ctx, nil); return err }},
		{"fleet install", false, false, func() error {
			_, err := (&fleetrun.Install{Fleet: fleet, ReadinessTimeout: 2 * time.Minute}).Run(ctx, nil)
			return err
		}},
		{"fleet uninstall", false, false, func() error {
			_, err := (&fleetrun.Uninstall{Fleet: fleet, Purge: true, Timeout: 2 * time.Minute}).Run(ctx, nil)
			return err
		}},
	} {
		err := step.run()
		var refused *kube.WriteRefusedError
		if errors.As(err, &refused) || (err != nil) != step.fails {
			t.Fatalf("%s: %v", step.name, err)
		}
		writes, outside, dryRuns := rec.take()
		switch {
		case len(outside) > 0:
			t.Errorf("%s wrote outside a run: %s", step.name, strings.Join(outside, ", "))
		case step.dryRun && (len(writes) > 0 || dryRuns == 0):
			t.Errorf("%s: %d writes, %d dry-run requests; want none and some", step.name, len(writes), dryRuns)
		case !step.dryRun && len(writes) == 0:
			t.Errorf("%s wrote nothing", step.name)
		}
		t.Logf("%s: %d writes, %d dry-run requests", step.name, len(writes), dryRuns)
	}

	// Outside a run the same clients refuse to write, and send nothing.
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "outside-a-run", "namespace": "default"}}}
	for _, client := range clients[:1] {
		_, err := client.Apply(ctx, cm, kube.ApplyOptions{})
		var refused *kube.WriteRefusedError
		if !errors.As(err, &refused) {
			t.Errorf("a write outside a run: %v, want it refused", err)
		}
		if _, err := client.Apply(ctx, cm, kube.ApplyOptions{DryRun: true}); err != nil {
			t.Errorf("a server-side dry run outside a run: %v", err)
		}
	}
	if writes, outside, _ := rec.take(); len(writes)+len(outside) > 0 {
		t.Errorf("the refused write was sent: %v %v", writes, outside)
	}
}
