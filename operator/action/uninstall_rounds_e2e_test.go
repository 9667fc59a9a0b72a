package action_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// uninstallStall is the longest an uninstall --purge may take before the test calls it a
// stall: the CRD finalizer's back-off once held one CRD for 292 s; a healthy purge takes
// a few seconds even on a loaded machine.
const uninstallStall = 30 * time.Second

// TestUninstallThenInstallE2E: uninstall --purge returns only when every object is gone,
// so an install right after it works, round after round, and no round stalls.
// ISTIOCTL_TEST_UNINSTALL_ROUNDS sets the rounds (default 3; the heavy run uses 20).
func TestUninstallThenInstallE2E(t *testing.T) {
	rounds := 3
	if v := os.Getenv("ISTIOCTL_TEST_UNINSTALL_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("ISTIOCTL_TEST_UNINSTALL_ROUNDS=%q: want a positive number", v)
		}
		rounds = n
	}
	c := cluster.Get(t)
	ctx := context.Background()
	purge := func() (*event.Recorder, time.Duration, error) {
		rec := &event.Recorder{}
		start := time.Now()
		_, err := (&action.Uninstall{Config: config(c), Purge: true, Timeout: uninstallStall, Events: rec}).Run(ctx, nil)
		return rec, time.Since(start), err
	}
	if _, _, err := purge(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _, _ = purge() })
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	istioCRDs := func() int {
		list, err := c.Dynamic.Resource(crds).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, crd := range list.Items {
			if strings.HasSuffix(crd.GetName(), ".istio.io") {
				n++
			}
		}
		return n
	}
	var times []string
	for r := 1; r <= rounds; r++ {
		start := time.Now()
		in := &action.Install{Config: config(c), Spec: spec.Options{Sets: []string{"profile=default"}},
			ReadinessTimeout: 2 * time.Minute, HistoryMax: action.DefaultHistoryMax}
		if _, err := in.Run(ctx, nil); err != nil {
			t.Fatalf("round %d: install right after an uninstall: %v", r, err)
		}
		installed := time.Since(start)
		if n := istioCRDs(); n < 10 {
			t.Fatalf("round %d: %d Istio CRDs after the install", r, n)
		}
		rec, took, err := purge()
		if err != nil {
			t.Fatalf("round %d: uninstall --purge (a stall if it ran out of its %s): %v", r, uninstallStall, err)
		}
		if n := istioCRDs(); n != 0 {
			t.Fatalf("round %d: the uninstall returned with %d Istio CRDs left", r, n)
		}
		left, err := c.Kube.CoreV1().ConfigMaps("istio-system").List(ctx, metav1.ListOptions{LabelSelector: ownership.LabelComponent})
		if err != nil {
			t.Fatal(err)
		}
		if len(left.Items) != 0 {
			t.Fatalf("round %d: the uninstall returned with %d of our ConfigMaps left", r, len(left.Items))
		}
		if d := lastDone(t, rec); d.Error != "" || !strings.HasSuffix(d.Message, "removed") {
			t.Errorf("round %d: done event %+v", r, d)
		}
		times = append(times, installed.Round(time.Millisecond).String()+"/"+took.Round(time.Millisecond).String())
	}
	t.Logf("%d rounds, install/uninstall each: %s", rounds, strings.Join(times, " "))
}
