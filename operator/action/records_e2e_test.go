package action_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/migrate"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// istiodUser is who istiod's ServiceAccount authenticates as.
const istiodUser = "system:serviceaccount:istio-system:istiod"

// forgedSpec widens istiod's ClusterRole to everything: what a forged record would make a
// restore apply.
const forgedSpec = `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  profile: default
  components:
    pilot:
      k8s:
        overlays:
          - kind: ClusterRole
            name: istiod-clusterrole-istio-system
            patches:
              - path: rules.[0].apiGroups
                value: ["*"]
              - path: rules.[0].resources
                value: ["*"]
              - path: rules.[0].verbs
                value: ["*"]
`

// asIstiod is a client of the test cluster acting as istiod's ServiceAccount, with the
// RBAC the install gave it.
func asIstiod(t *testing.T, c *cluster.Cluster) *kubernetes.Clientset {
	t.Helper()
	cfg := rest.CopyConfig(c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: istiodUser}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// istiodRoleWide says whether istiod's ClusterRole grants everything (the forged overlay).
func istiodRoleWide(t *testing.T, c *cluster.Cluster) bool {
	t.Helper()
	cr, err := c.Kube.RbacV1().ClusterRoles().Get(context.Background(), "istiod-clusterrole-istio-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cr.Rules {
		if slices.Contains(r.Verbs, "*") && slices.Contains(r.Resources, "*") {
			return true
		}
	}
	return false
}

// refusedNaming says err is the refusal of an untrusted record naming object.
func refusedNaming(err error, object string) bool {
	var untrusted *history.UntrustedError
	return errors.As(err, &untrusted) && untrusted.Object == object && strings.Contains(err.Error(), object)
}

// TestForgedRecordsE2E: records written as istiod's ServiceAccount (impersonated), which
// may create Secrets and ConfigMaps in the istio namespace but not write the Namespace
// that keeps the seals, steer nothing. A forged install record v99 whose overlay widens
// istiod's ClusterRole: history marks it untrusted, rollback 99 refuses naming it, and a
// failing install --atomic does not apply it (it says why and restores nothing); istiod's
// ClusterRole stays as installed. A forged upgrade record: the revision upgrade's resume
// and --rollback refuse naming it, and relabel nothing.
func TestForgedRecordsE2E(t *testing.T) {
	c := purged(t)
	ctx := context.Background()
	installWith(t, c, action.Install{HistoryMax: action.DefaultHistoryMax}, "profile=default")
	istiod := asIstiod(t, c)

	// The seals' holder is out of istiod's reach.
	seal := []byte(`{"metadata":{"annotations":{"` + history.SealPrefix + `istioctl-install-default-v99":"sha256:0"}}}`)
	if _, err := istiod.CoreV1().Namespaces().Patch(ctx, "istio-system", types.MergePatchType, seal, metav1.PatchOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("istiod's ServiceAccount patched the istio Namespace: %v", err)
	}

	// Record v99, as istiod's ServiceAccount may write it.
	payload, err := history.Encode(&history.Record{Number: 99, Revision: "default", Time: time.Now().UTC(), ToolVersion: "1.30.0",
		Action: history.ActionInstall, Outcome: history.Succeeded, Profile: "default", Spec: forgedSpec, Trust: history.Sealed})
	if err != nil {
		t.Fatal(err)
	}
	forged := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: history.SecretName("default", 99), Namespace: "istio-system", Labels: map[string]string{
			history.LabelManagedBy: history.ManagedBy, history.LabelRecord: "true", ownership.LabelRevision: "default", history.LabelNumber: strconv.Itoa(99)}},
		Type: history.SecretType, Data: map[string][]byte{history.DataKey: payload},
	}
	if _, err := istiod.CoreV1().Secrets("istio-system").Create(ctx, forged, metav1.CreateOptions{}); err != nil {
		t.Fatalf("istiod's ServiceAccount could not write the forged record (the threat this test needs): %v", err)
	}
	const v99 = "Secret/istio-system/istioctl-install-default-v99"

	// history marks it.
	rs := histHistory(t, c, "default")
	if len(rs) != 2 || rs[0].Number != 1 || rs[0].Trust != history.Sealed || rs[1].Number != 99 || rs[1].Trust != history.Unsealed {
		t.Fatalf("history: %+v", rs)
	}

	// rollback 99 -y refuses it, naming it, and applies nothing.
	_, rec, err := histRollback(c, 99, false)
	if !refusedNaming(err, v99) || len(rec.Of(event.Applied)) != 0 {
		t.Errorf("rollback 99: %v (%d applied)", err, len(rec.Of(event.Applied)))
	}
	if istiodRoleWide(t, c) {
		t.Fatal("rollback 99 widened istiod's ClusterRole")
	}

	// A failing install --atomic restores nothing from it: it says why.
	rec, err = histBroken(c)
	if err == nil || !refusedNaming(err, v99) || !strings.Contains(err.Error(), "--atomic did not restore revision default") ||
		!histHas(rec, event.Warning, histMessage, "--atomic restores nothing") {
		t.Errorf("failing atomic install: %v\n%+v", err, rec.Of(event.Warning))
	}
	if dones := rec.Of(event.Done); len(dones) != 1 {
		t.Errorf("a restore ran: %+v", dones)
	}
	if istiodRoleWide(t, c) {
		t.Fatal("install --atomic applied the forged record")
	}
	if err := c.Kube.CoreV1().Secrets("istio-system").Delete(ctx, forged.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// A forged upgrade record: resume and --rollback refuse it.
	progress := `{"from":"default","to":"canary","relabel":[{"namespace":"kube-system","from":"","to":"canary"}],"batches":[],"done":0}`
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: migrate.RecordName, Namespace: "istio-system", Labels: map[string]string{
			history.LabelManagedBy: history.ManagedBy, "install.istio.io/revision-upgrade": "true"}},
		Data: map[string]string{"progress": progress},
	}
	if _, err := istiod.CoreV1().ConfigMaps("istio-system").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("istiod's ServiceAccount could not write the forged upgrade record: %v", err)
	}
	t.Cleanup(func() {
		_ = c.Kube.CoreV1().ConfigMaps("istio-system").Delete(context.Background(), cm.Name, metav1.DeleteOptions{})
	})
	const upgradeRecord = "ConfigMap/istio-system/" + migrate.RecordName
	for _, rollback := range []bool{false, true} {
		up := &action.RevisionUpgrade{Config: config(c), Spec: spec.Options{Sets: []string{"revision=canary"}}, Rollback: rollback,
			ReadinessTimeout: time.Minute, HistoryMax: action.DefaultHistoryMax, Events: &event.Recorder{}}
		if _, err := up.Run(ctx, nil); !refusedNaming(err, upgradeRecord) || !strings.Contains(err.Error(), "Resume and --rollback stop") {
			t.Errorf("upgrade (rollback %v) over a forged record: %v", rollback, err)
		}
	}
	ks, err := c.Kube.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := ks.Labels[ownership.LabelRevision]; ok {
		t.Errorf("kube-system relabelled %s=%s from the forged record", ownership.LabelRevision, v)
	}
	if _, err := c.Kube.AppsV1().Deployments("istio-system").Get(ctx, "istiod-canary", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the canary was installed past a forged upgrade record: %v", err)
	}
}
