package action_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// TestExternalTakeOwnershipE2E: an object the install renders, created by hand first. The
// install stops before writing anything, naming it and its manager; TakeOwnership adopts
// it.
func TestExternalTakeOwnershipE2E(t *testing.T) {
	c := cluster.Get(t)
	ctx := context.Background()
	ns := c.Namespace(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "istio-cni", Namespace: ns, Labels: map[string]string{"team": "mesh"}}}
	if _, err := c.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{FieldManager: "by-hand"}); err != nil {
		t.Fatal(err)
	}
	// Base and CNI: charts that need no running control plane.
	opts := spec.Options{Sets: []string{"profile=minimal", "components.pilot.enabled=false", "components.cni.enabled=true",
		"namespace=" + ns, "values.global.istioNamespace=" + ns}}
	t.Cleanup(func() {
		cfg := extConfig(c)
		cfg.IstioNamespace = ns
		_, _ = (&action.Uninstall{Config: cfg, Spec: spec.Options{Revision: "default", Sets: []string{"namespace=" + ns}}, Timeout: 5 * time.Minute}).Run(context.Background(), nil)
	})
	crdBefore, _ := c.Dynamic.Resource(extCRDs).Get(ctx, "gateways.networking.istio.io", metav1.GetOptions{})
	adopted := "ServiceAccount/" + ns + "/istio-cni"

	_, _, err := extInstall(c, action.Install{}, opts)
	extErrorSays(t, "install over a hand-made object", err, "objects this install would apply exist and were not installed by istioctl:\n  "+
		adopted+": managed by field manager by-hand\nNothing was written", "adopt them with --take-ownership")
	if _, err := c.Kube.AppsV1().DaemonSets(ns).Get(ctx, "istio-cni-node", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused install created the CNI DaemonSet (%v)", err)
	}
	if crdBefore != nil {
		if after, _ := c.Dynamic.Resource(extCRDs).Get(ctx, "gateways.networking.istio.io", metav1.GetOptions{}); after == nil || after.GetResourceVersion() != crdBefore.GetResourceVersion() {
			t.Error("the refused install wrote Base's CRDs")
		}
	}
	cms, _ := c.Kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: "operator.istio.io/managed"})
	if len(cms.Items) > 0 {
		t.Errorf("the refused install wrote %d ConfigMap(s)", len(cms.Items))
	}

	_, rec := extMustInstall(t, c, action.Install{TakeOwnership: true}, opts)
	if !extEvent(rec, event.Warning, adopted, "adopted from field manager by-hand") || lastDone(t, rec).Result != event.RunSucceeded {
		t.Errorf("install with TakeOwnership: done %+v\n%s", lastDone(t, rec), messages(rec, event.Warning))
	}
	got, err := c.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, "istio-cni", metav1.GetOptions{})
	if err != nil || got.Labels["operator.istio.io/managed"] != "Reconcile" || got.Labels["operator.istio.io/component"] != "Cni" {
		t.Errorf("the adopted ServiceAccount: %v %v", err, got.Labels)
	}
	// Adopted, it is ours: the next install needs no TakeOwnership.
	if res, _ := extMustInstall(t, c, action.Install{}, opts); res.Applied != 0 {
		t.Errorf("re-install: %d applied, want 0", res.Applied)
	}
}
