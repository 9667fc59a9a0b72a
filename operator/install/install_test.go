package install_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/readiness"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/schedule"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

func TestMain(m *testing.M) { cluster.Main(m) }

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func objects(t *testing.T, ns, y string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := render.ParseObjects([]byte(strings.ReplaceAll(y, "NS", ns)))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func manifest(t *testing.T, name component.Name, ns, y string) render.Manifest {
	c, _ := component.Get(name)
	return render.Manifest{Instance: component.Instance{Component: c, Namespace: ns}, Objects: objects(t, ns, y)}
}

const pilotYAML = `
apiVersion: v1
kind: ServiceAccount
metadata: {name: istiod, namespace: NS}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: istio, namespace: NS}
data: {mesh: "{}"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: istiod, namespace: NS}
spec:
  replicas: 2
  selector: {matchLabels: {app: istiod}}
  template:
    # A stand-in with no args (pilot-discovery would print its help and exit): the bed's
    # real istiod leaves it to kwok.
    metadata: {labels: {app: istiod, istioctl.test/real-istiod: "off"}}
    spec:
      serviceAccountName: istiod
      containers: [{name: discovery, image: docker.io/istio/pilot:1.30.0}]
---
apiVersion: v1
kind: Service
metadata: {name: istiod, namespace: NS}
spec:
  selector: {app: istiod}
  ports: [{name: grpc-xds, port: 15010}]
`

const baseYAML = `
apiVersion: v1
kind: ServiceAccount
metadata: {name: istio-reader-service-account, namespace: NS}
`

func TestInstallWaitPrune(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	// Count the requests that could write, to prove a re-install makes none.
	// And count reads of single objects: waits watch, they do not poll.
	var writes, gets atomic.Int64
	cfg := rest.CopyConfig(c.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			// .../namespaces/NS/<resource>/<name> reads one object.
			if _, rest, ok := strings.Cut(r.URL.Path, "/namespaces/"+ns+"/"); ok && r.Method == http.MethodGet && strings.Count(rest, "/") == 1 {
				gets.Add(1)
				t.Logf("single-object read: %s", r.URL.Path)
			}
			if r.Method != http.MethodGet {
				writes.Add(1)
				t.Logf("write request: %s %s", r.Method, r.URL.Path)
			}
			return rt.RoundTrip(r)
		})
	}
	client, err := kube.NewClientForConfig(cfg, ownership.KubeOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	owner := ownership.Owner{Namespace: ns, Version: "1.30.0"}
	run := func(ms ...render.Manifest) (*install.Result, *event.Recorder, error) {
		rec := &event.Recorder{}
		in := (&install.Installer{Client: client, Owner: owner, Opts: install.Options{Timeout: time.Minute}}).Start()
		stale, err := in.Stale(ctx, ms)
		if err != nil {
			return nil, rec, err
		}
		res, err := in.Install(ctx, rec, nil, ms, stale)
		return res, rec, err
	}

	res, rec, err := run(manifest(t, component.Base, ns, baseYAML), manifest(t, component.Pilot, ns, pilotYAML))
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied() != 5 || res.Unchanged() != 0 {
		t.Errorf("first install: %+v", res)
	}
	if n := gets.Load(); n != 0 {
		t.Errorf("the install read %d objects one by one; it should list and watch", n)
	}
	// Base is ready before Pilot starts.
	var order []string
	for _, e := range rec.Events {
		if e.Type == event.ComponentStarted || e.Type == event.ComponentReady {
			order = append(order, string(e.Type)+" "+e.Component)
		}
	}
	if strings.Join(order, ", ") != "component-started Base, component-ready Base, component-started Pilot, component-ready Pilot" {
		t.Errorf("component order: %v", order)
	}
	live, err := client.Get(ctx, objects(t, ns, pilotYAML)[2])
	if err != nil || live == nil {
		t.Fatalf("Deployment: %v", err)
	}
	for k, want := range map[string]string{
		ownership.LabelComponent: "Pilot", ownership.LabelManaged: "Reconcile", ownership.LabelRevision: "default",
		ownership.LabelOwnerNamespace: ns, ownership.LabelVersion: "1.30.0",
	} {
		if got := live.GetLabels()[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	if r, _, _ := unstructured.NestedInt64(live.Object, "status", "readyReplicas"); r != 2 {
		t.Errorf("readyReplicas = %d after the wait", r)
	}

	// The same install again writes nothing.
	writes.Store(0)
	res, _, err = run(manifest(t, component.Base, ns, baseYAML), manifest(t, component.Pilot, ns, pilotYAML))
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied() != 0 || res.Unchanged() != 5 || res.Pruned() != 0 {
		t.Errorf("re-install: %+v", res)
	}
	if n := writes.Load(); n != 0 {
		t.Errorf("re-install sent %d write requests, want 0", n)
	}

	// Drop the ConfigMap from the render: it is pruned, and nothing else.
	without := strings.Replace(pilotYAML, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio, namespace: NS}\ndata: {mesh: \"{}\"}\n---\n", "", 1)
	res, rec, err = run(manifest(t, component.Base, ns, baseYAML), manifest(t, component.Pilot, ns, without))
	if err != nil {
		t.Fatal(err)
	}
	pruned := rec.Of(event.Pruned)
	if res.Pruned() != 1 || len(pruned) != 1 || pruned[0].Object != "ConfigMap/"+ns+"/istio" {
		t.Errorf("prune: %+v %+v", res, pruned)
	}
}

func TestInstallNotReadyNamesTheCause(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	client := harness.Client(t, c)
	stuck := strings.Replace(pilotYAML, "serviceAccountName: istiod", "serviceAccountName: istiod\n      nodeSelector: {no-such-label: x}", 1)
	rec := &event.Recorder{}
	in := (&install.Installer{Client: client, Owner: ownership.Owner{Namespace: ns, Version: "1.30.0"},
		Opts: install.Options{Timeout: 4 * time.Second}}).Start()
	gw := manifest(t, component.IngressGateways, ns, `{apiVersion: v1, kind: ConfigMap, metadata: {name: gw, namespace: NS}}`)
	_, err := in.Install(context.Background(), rec, nil, []render.Manifest{manifest(t, component.Pilot, ns, stuck), gw}, nil)
	var nr *install.NotReadyError
	if !errors.As(err, &nr) {
		t.Fatalf("err = %v, want NotReadyError", err)
	}
	details := strings.Join(nr.Details, "\n")
	for _, want := range []string{"Deployment/" + ns + "/istiod (", "unschedulable"} {
		if !strings.Contains(details, want) {
			t.Errorf("details lack %q:\n%s", want, details)
		}
	}
	// The gateway depends on Pilot: skipped, never applied.
	if skipped := rec.Of(event.ComponentSkipped); len(skipped) != 1 || skipped[0].Component != "IngressGateways" {
		t.Errorf("skipped: %+v", skipped)
	}
	if live, _ := client.Get(context.Background(), gw.Objects[0]); live != nil {
		t.Error("the gateway was applied although Pilot failed")
	}
}

// Pods refused by a ResourceQuota that allows none, with no old pod to free any: final. A
// Deployment says so in its status (its ReplicaSet's FailedCreate), a DaemonSet only in
// its FailedCreate events; both fail at once, naming the quota, instead of waiting out
// the readiness timeout.
func TestInstallFailsAtRefusedPods(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	client := harness.Client(t, c)
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "no-pods"}, Spec: corev1.ResourceQuotaSpec{
		Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}}}
	if _, err := c.Kube.CoreV1().ResourceQuotas(ns).Create(context.Background(), quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const cniYAML = `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: istio-cni-node, namespace: NS}
spec:
  selector: {matchLabels: {k8s-app: istio-cni-node}}
  template:
    metadata: {labels: {k8s-app: istio-cni-node}}
    spec:
      containers: [{name: install-cni, image: docker.io/istio/install-cni:1.30.0}]
`
	const timeout = 2 * time.Minute
	in := (&install.Installer{Client: client, Owner: ownership.Owner{Namespace: ns, Version: "1.30.0"},
		Opts: install.Options{Timeout: timeout}}).Start()
	start := time.Now()
	_, err := in.Install(context.Background(), &event.Recorder{}, nil, []render.Manifest{manifest(t, component.Pilot, ns, pilotYAML), manifest(t, component.Cni, ns, cniYAML)}, nil)
	took := time.Since(start)
	if err == nil {
		t.Fatal("the install succeeded although the quota allows no pod")
	}
	report := err.Error()
	for _, want := range []string{
		"Deployment/" + ns + "/istiod failed: pods refused by ResourceQuota: ", "exceeded quota: no-pods",
		"DaemonSet/" + ns + "/istio-cni-node failed: pods refused by ResourceQuota: pods \"istio-cni-node-",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	// A quota that no old pod of the workload frees is final: no waiting for the timeout.
	// Shown by the cause it failed on (the refusal above, not the timeout), and by a bound
	// load cannot reach: half the 2m timeout, which a wait would have run out.
	if strings.Contains(report, "within the readiness timeout") {
		t.Errorf("the install waited out its timeout instead of failing on the refusal:\n%s", report)
	}
	if took > timeout/2 {
		t.Errorf("the install took %s to fail, want it at the first refusal, not at its %v timeout", took, timeout)
	}
}

// An install into a namespace that is being deleted waits until it is gone and creates it
// again, instead of failing on every object.
func TestInstallIntoTerminatingNamespace(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	ctx := context.Background()
	// A ConfigMap with a finalizer holds the namespace in Terminating until we drop it.
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "held", "namespace": ns, "finalizers": []any{"example.com/hold"}},
	}}
	cmGVR := metav1SchemeConfigMaps()
	if _, err := c.Dynamic.Resource(cmGVR).Namespace(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(time.Second)
		_, _ = c.Dynamic.Resource(cmGVR).Namespace(ns).Patch(ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	}()
	client := harness.Client(t, c)
	in := (&install.Installer{Client: client, Owner: ownership.Owner{Namespace: ns, Version: "1.30.0"}, Opts: install.Options{Timeout: 2 * time.Minute}}).Start()
	if _, err := in.Install(ctx, nil, nil, []render.Manifest{manifest(t, component.Base, ns, baseYAML)}, nil); err != nil {
		t.Fatalf("install into a terminating namespace: %v", err)
	}
	if _, err := c.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, "istio-reader-service-account", metav1.GetOptions{}); err != nil {
		t.Errorf("the ServiceAccount is not there: %v", err)
	}
}

func metav1SchemeConfigMaps() schema.GroupVersionResource {
	return schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
}

// A webhook configuration of Base calling a Service that Pilot renders (what
// values.defaultRevision does to istiod-default-validator): Pilot starts only once Base is
// ready, so Base must not wait for that Service's endpoints. The install finishes, and the
// webhook is served once Pilot is ready.
func TestInstallWebhookServedByALaterComponent(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	ctx := context.Background()
	client := harness.Client(t, c)
	validator := `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: default-validator-NS}
webhooks:
- name: validation.istioctl.test
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  clientConfig: {service: {name: istiod, namespace: NS, path: /validate}}
  rules: [{apiGroups: [istioctl.test], apiVersions: ["*"], operations: [CREATE], resources: [nothings]}]
`
	base := manifest(t, component.Base, ns, baseYAML+"---"+validator)
	vwcs := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
	t.Cleanup(func() {
		_ = c.Dynamic.Resource(vwcs).Delete(context.Background(), base.Objects[1].GetName(), metav1.DeleteOptions{})
	})
	in := (&install.Installer{Client: client, Owner: ownership.Owner{Namespace: ns, Version: "1.30.0"},
		Opts: install.Options{Timeout: time.Minute}}).Start()
	if _, err := in.Install(ctx, nil, nil, []render.Manifest{base, manifest(t, component.Pilot, ns, pilotYAML)}, nil); err != nil {
		t.Fatalf("install: %v", err)
	}
	list := func(gvk schema.GroupVersionKind, namespace, selector string) ([]*unstructured.Unstructured, error) {
		items, err := client.ListIn(ctx, gvk, namespace, selector)
		out := make([]*unstructured.Unstructured, len(items))
		for i := range items {
			out[i] = &items[i]
		}
		return out, err
	}
	live, err := client.Get(ctx, base.Objects[1])
	if err != nil || live == nil {
		t.Fatalf("the validator: %v, %v", live, err)
	}
	// The EndpointSlice controller follows the pods a moment later.
	var r readiness.Result
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if r, err = readiness.CheckWith(live, list); err != nil || r.Status == readiness.Ready {
			break
		}
	}
	if err != nil || r.Status != readiness.Ready {
		t.Errorf("the validator once Pilot is ready: %+v, %v", r, err)
	}
}

// A run gated on a run beside it (a fleet's remote on its primary's Pilot, schedule's
// After): when that need fails, its Base stands, the rest is skipped, the run fails with
// the need (no failure of its own says why), and nothing it owned is pruned.
func TestInstallOuterNeedFails(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t)
	client := harness.Client(t, c)
	ctx := t.Context()
	owner := ownership.Owner{Namespace: ns, Version: "1.30.0"}
	start := func() *install.Run {
		return (&install.Installer{Client: client, Owner: owner, Opts: install.Options{Timeout: time.Minute}}).Start()
	}
	const oldYAML = `{apiVersion: v1, kind: ConfigMap, metadata: {name: old, namespace: NS}}`
	if _, err := start().Install(ctx, nil, nil, []render.Manifest{manifest(t, component.Pilot, ns, oldYAML)}, nil); err != nil {
		t.Fatal(err)
	}
	ms := []render.Manifest{
		manifest(t, component.Base, ns, `{apiVersion: v1, kind: ConfigMap, metadata: {name: base, namespace: NS}}`),
		manifest(t, component.Pilot, ns, `{apiVersion: v1, kind: ConfigMap, metadata: {name: pilot, namespace: NS}}`),
	}
	in := start()
	stale, err := in.Stale(ctx, ms)
	if err != nil || len(stale) != 1 {
		t.Fatalf("stale: %d objects, %v; want the old ConfigMap", len(stale), err)
	}
	hooks := schedule.New()
	hooks.Scope("primary").End(string(component.Pilot), errors.New("istiod crash-loops"))
	rec := &event.Recorder{}
	_, err = in.Install(ctx, rec, hooks.Scope("remote").After([]string{"primary/Pilot"}, string(component.Base)), ms, stale)
	var need *schedule.NeedError
	if !errors.As(err, &need) || need.Need != "primary/Pilot" {
		t.Fatalf("err = %v, want the primary's Pilot named", err)
	}
	for _, tc := range []struct {
		obj  *unstructured.Unstructured
		want bool
	}{{ms[0].Objects[0], true}, {ms[1].Objects[0], false}, {stale[0], true}} {
		if live, _ := client.Get(ctx, tc.obj); (live != nil) != tc.want {
			t.Errorf("%s: there %v, want %v", tc.obj.GetName(), live != nil, tc.want)
		}
	}
	if skipped := rec.Of(event.ComponentSkipped); len(skipped) != 1 || skipped[0].Component != string(component.Pilot) {
		t.Errorf("skipped: %+v", skipped)
	}
}
