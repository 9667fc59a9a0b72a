package action

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/fakekube"
)

// widening is a spec whose overlay lets istiod do anything: what a forged record carries.
const widening = `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  components:
    pilot:
      k8s:
        overlays:
          - kind: ClusterRole
            name: istiod-clusterrole-istio-system
            patches:
              - path: rules.[0].verbs
                value: ["*"]
`

// recordsCluster is a fake cluster with the istio namespace, a record istioctl wrote
// (sealed, number 1) and, when forged is not nil, that record written by another account
// through the API (no seal), as istiod's ServiceAccount may; objs are there too.
func recordsCluster(t *testing.T, forged *history.Record, objs ...*unstructured.Unstructured) *fakekube.Store {
	t.Helper()
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(history.SealHolder)
	ns.SetName("istio-system")
	f := fakekube.NewStore(append(objs, ns)...)
	s := &history.Store{Client: f.Client, Namespace: "istio-system"}
	ctx := context.Background()
	if err := s.Create(ctx, &history.Record{Time: time.Now().UTC(), Action: history.ActionInstall, Outcome: history.Succeeded, Profile: "default",
		Spec: "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec: {}\n"}, 0); err != nil {
		t.Fatal(err)
	}
	if forged == nil {
		return f
	}
	genuine, err := f.Dynamic.Resource(fakekube.SecretsGVR).Namespace("istio-system").Get(ctx, history.SecretName("default", 1), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	payload, err := history.Encode(forged)
	if err != nil {
		t.Fatal(err)
	}
	o := genuine.DeepCopy()
	o.SetName(history.SecretName(forged.Revision, forged.Number))
	o.SetUID("")
	o.SetResourceVersion("")
	_ = unstructured.SetNestedField(o.Object, base64.StdEncoding.EncodeToString(payload), "data", history.DataKey)
	if _, err := f.Dynamic.Resource(fakekube.SecretsGVR).Namespace("istio-system").Create(ctx, o, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return f
}

func forgedRecord(n int) *history.Record {
	return &history.Record{Number: n, Revision: "default", Time: time.Now().UTC(), Action: history.ActionInstall, Outcome: history.Succeeded,
		Profile: "default", Spec: widening, Trust: history.Sealed}
}

// writes are the requests that would change the fake cluster, since the start.
func writes(f *fakekube.Store, from int) []string {
	var out []string
	for _, a := range f.Dynamic.Actions()[from:] {
		if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" {
			out = append(out, v+" "+a.GetResource().Resource)
		}
	}
	return out
}

// TestRollbackRefusesUntrusted: rollback N of a record another account wrote is refused,
// naming the record and what to do, before it renders or writes anything.
func TestRollbackRefusesUntrusted(t *testing.T) {
	f := recordsCluster(t, forgedRecord(99))
	before := len(f.Dynamic.Actions())
	rec := &event.Recorder{}
	cfg := &Config{}
	a := &Rollback{Config: cfg, Number: 99, Events: rec}
	_, err := a.plan(context.Background(), cfg.begin(f.Client, rec, false))
	var untrusted *history.UntrustedError
	if !errors.As(err, &untrusted) || untrusted.Object != "Secret/istio-system/istioctl-install-default-v99" ||
		!strings.Contains(err.Error(), "refusing to re-install install record 99 of revision default") || !strings.Contains(err.Error(), "istioctl install -f") {
		t.Fatalf("plan: %v", err)
	}
	if w := writes(f, before); len(w) > 0 {
		t.Errorf("wrote %v", w)
	}
}

// TestAtomicRestoresNoUntrusted: a failed install --atomic whose previous successful record
// is not sealed restores nothing: it says why, keeps what failed, and writes nothing.
func TestAtomicRestoresNoUntrusted(t *testing.T) {
	f := recordsCluster(t, forgedRecord(2))
	before := len(f.Dynamic.Actions())
	rec := &event.Recorder{}
	cfg := &Config{}
	res, err := spec.Resolve(spec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := &Install{Config: cfg, Atomic: true, Events: rec}
	p := &InstallPlan{planned: planned{client: f.Client}, res: res}
	cause := errors.New("istiod did not become ready")
	err = a.restore(context.Background(), cfg.begin(f.Client, rec, false), p, &InstallResult{}, cause)
	var untrusted *history.UntrustedError
	if !errors.Is(err, cause) || !errors.As(err, &untrusted) || untrusted.Object != "Secret/istio-system/istioctl-install-default-v2" ||
		!strings.Contains(err.Error(), "--atomic did not restore revision default") {
		t.Fatalf("restore: %v", err)
	}
	if ws := rec.Of(event.Warning); len(ws) != 1 || !strings.Contains(ws[0].Message, "--atomic restores nothing") {
		t.Errorf("warnings: %+v", ws)
	}
	if w := writes(f, before); len(w) > 0 {
		t.Errorf("wrote %v", w)
	}
}

// TestPinSource: --pin-digests takes the digests of a sealed record only.
func TestPinSource(t *testing.T) {
	rec := &event.Recorder{}
	sealed := &history.Record{Number: 3, Trust: history.Sealed, Digests: map[string]string{"a": "sha256:1"}}
	if got := pinSource(sealed, rec); got != sealed || len(rec.Events) != 0 {
		t.Errorf("sealed: %v %+v", got, rec.Events)
	}
	forged := &history.Record{Number: 4, Trust: history.Unsealed, Digests: map[string]string{"a": "sha256:evil"}}
	if got := pinSource(forged, rec); got != nil || len(rec.Events) != 1 || !strings.Contains(rec.Events[0].Message, "does not take the digests of install record 4") {
		t.Errorf("forged: %v %+v", got, rec.Events)
	}
	if pinSource(nil, rec) != nil {
		t.Error("no record")
	}
}

// TestRollbackReview: before a rollback writes, it says what it changes in what istiod's
// roles grant (against the live objects) and in the k8s overlays (against the newest sealed
// record), and keeps both in its plan.
func TestRollbackReview(t *testing.T) {
	role := func(verbs ...any) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
			"metadata": map[string]any{"name": "istiod-clusterrole-istio-system"},
			"rules":    []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": verbs}}}}
		return o
	}
	f := recordsCluster(t, nil, role("get", "list"))
	ctx := context.Background()
	records, err := (&history.Store{Client: f.Client, Namespace: "istio-system"}).List(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	res, err := spec.Resolve(spec.Options{Files: []string{"-"}, Stdin: strings.NewReader(widening)})
	if err != nil {
		t.Fatal(err)
	}
	rec := &event.Recorder{}
	cfg := &Config{}
	p := &RollbackPlan{Target: &history.Record{Number: 7}, Install: &InstallPlan{res: res,
		apply: (&install.Installer{Client: f.Client}).Start(), manifests: []render.Manifest{{Objects: []*unstructured.Unstructured{role("*")}}}}}
	if err := (&Rollback{Config: cfg}).review(ctx, cfg.begin(f.Client, rec, false), p, records); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range rec.Of(event.Warning) {
		got = append(got, e.Object+" "+e.Message)
	}
	want := []string{
		`ClusterRole/istiod-clusterrole-istio-system record 7 changes what it grants: - rule apiGroups=[""] resources=[secrets] verbs=[get list]; + rule apiGroups=[""] resources=[secrets] verbs=[*]`,
		` record 7 changes the k8s overlays (from record 1): + Pilot: ClusterRole istiod-clusterrole-istio-system: rules.[0].verbs = ["*"]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("said:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(p.RBAC) != 1 || len(p.Overlays) != 1 {
		t.Errorf("plan: %+v %v", p.RBAC, p.Overlays)
	}
}
