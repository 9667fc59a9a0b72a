package history_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

func TestMain(m *testing.M) { cluster.Main(m) }

// TestStore writes, lists, updates and trims records on the local cluster, and checks the
// record Secrets stay out of what an install prunes or an uninstall removes.
func TestStore(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	client := harness.Client(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := &history.Store{Client: client, Namespace: ns}

	if rs, err := s.List(ctx, ""); err != nil || len(rs) != 0 {
		t.Fatalf("empty history: %v %v", rs, err)
	}
	for i := 0; i < 4; i++ {
		r := &history.Record{Time: time.Now(), Outcome: history.Succeeded, Spec: "spec: {}\n"}
		if err := s.Create(ctx, r, 3); err != nil {
			t.Fatal(err)
		}
		if r.Number != i+1 || r.Revision != "default" {
			t.Errorf("record %d: number %d revision %q", i, r.Number, r.Revision)
		}
	}
	canary := &history.Record{Revision: "canary", Outcome: history.Failed}
	if err := s.Create(ctx, canary, 3); err != nil || canary.Number != 1 {
		t.Fatalf("canary: %v %d", err, canary.Number)
	}
	rs, err := s.List(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	var nums []int
	for _, r := range rs {
		nums = append(nums, r.Number)
	}
	if len(nums) != 3 || nums[0] != 2 || nums[2] != 4 {
		t.Errorf("kept %v, want the newest 3 (2, 3, 4)", nums)
	}
	if all, _ := s.List(ctx, ""); len(all) != 4 || all[0].Revision != "canary" {
		t.Errorf("every revision: %d records", len(all))
	}
	// Numbers go on after a trim.
	r := &history.Record{Outcome: history.Succeeded}
	if err := s.Create(ctx, r, 0); err != nil || r.Number != 5 {
		t.Errorf("next: %v %d", err, r.Number)
	}

	canary.Outcome = history.RolledBack
	canary.SetDescription("install failed; rolled back")
	if err := s.Update(ctx, canary); err != nil {
		t.Fatal(err)
	}
	got, _ := s.List(ctx, "canary")
	if len(got) != 1 || got[0].Outcome != history.RolledBack || got[0].Description != "install failed; rolled back" {
		t.Errorf("updated: %+v", got)
	}

	sec, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, "istioctl-install-default-v4", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Type != history.SecretType || sec.Labels[history.LabelNumber] != "4" || len(sec.Data[history.DataKey]) == 0 {
		t.Errorf("secret: type %q labels %v", sec.Type, sec.Labels)
	}

	// A Secret with the labels but of another type is not a record.
	sec.ObjectMeta = metav1.ObjectMeta{Name: "look-alike", Namespace: ns, Labels: sec.Labels}
	sec.Type = "Opaque"
	if _, err := c.Kube.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if rs, err := s.List(ctx, "default"); err != nil || len(rs) != 4 {
		t.Errorf("with a look-alike: %d records, %v", len(rs), err)
	}

	// Neither an install's prune nor an uninstall, even with purge, sees the records.
	in := (&install.Installer{Client: client, Owner: ownership.Owner{Namespace: ns}}).Start()
	stale, err := in.Stale(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := in.Targets(ctx, install.UninstallOptions{Purge: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range append(stale, targets...) {
		if strings.HasPrefix(o.GetName(), "istioctl-install-") {
			t.Errorf("%s would be pruned or removed", ref.Of(o).String())
		}
	}
}
