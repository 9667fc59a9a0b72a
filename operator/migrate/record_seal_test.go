package migrate

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktesting "k8s.io/client-go/testing"

	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/pkg/testing/fakekube"
)

// TestRecordSealed: the progress record saveRecord writes is sealed and loads; one written
// or changed by another account (istiod's ServiceAccount may write ConfigMaps in the istio
// namespace) is refused by LoadRecord, naming it, so resume and --rollback stop.
func TestRecordSealed(t *testing.T) {
	ctx := context.Background()
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(history.SealHolder)
	ns.SetName("istio-system")
	rec := &Record{From: "a", To: "b", Relabel: []Relabel{{Namespace: "app", From: "a", To: "b"}}, Batches: [][]Workload{{{Namespace: "app", Kind: "Deployment", Name: "w"}}}}
	cms := func(f *fakekube.Store) interface {
		Get(context.Context, string, metav1.GetOptions, ...string) (*unstructured.Unstructured, error)
	} {
		return f.Dynamic.Resource(fakekube.ConfigMapsGVR).Namespace("istio-system")
	}
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, f *fakekube.Store)
		want   history.Trust
	}{
		{"as saved", func(*testing.T, *fakekube.Store) {}, history.Sealed},
		{"relabels added by another account", func(t *testing.T, f *fakekube.Store) {
			live, err := cms(f).Get(ctx, RecordName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			data, _, _ := unstructured.NestedString(live.Object, "data", recordKey)
			data = strings.Replace(data, `"relabel":[`, `"relabel":[{"namespace":"kube-system","from":"x","to":"y"},`, 1)
			_ = unstructured.SetNestedField(live.Object, data, "data", recordKey)
			if _, err := f.Dynamic.Resource(fakekube.ConfigMapsGVR).Namespace("istio-system").Update(ctx, live, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}, history.Changed},
		{"written by another account", func(t *testing.T, f *fakekube.Store) {
			if err := f.Dynamic.Resource(fakekube.ConfigMapsGVR).Namespace("istio-system").Delete(ctx, RecordName, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			forged := recordObject("istio-system", `{"from":"a","to":"b","batches":[]}`)
			if _, err := f.Dynamic.Resource(fakekube.ConfigMapsGVR).Namespace("istio-system").Create(ctx, forged, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}, history.Changed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fakekube.NewStore(ns)
			if err := saveRecord(ctx, f.Client, "istio-system", rec, false); err != nil {
				t.Fatal(err)
			}
			// The record, then its seal, both as this package's field manager.
			var managers []string
			for _, a := range f.Dynamic.Actions() {
				if p, ok := a.(ktesting.PatchActionImpl); ok {
					managers = append(managers, p.Resource.Resource+":"+p.PatchOptions.FieldManager)
				}
			}
			if got := strings.Join(managers, " "); got != "configmaps:"+FieldManager+" namespaces:"+FieldManager {
				t.Errorf("writes: %s", got)
			}
			tc.tamper(t, f)
			got, err := LoadRecord(ctx, f.Client, "istio-system")
			var untrusted *history.UntrustedError
			switch {
			case tc.want == history.Sealed:
				if err != nil || got == nil || len(got.Relabel) != 1 {
					t.Fatalf("load: %+v %v", got, err)
				}
			case !errors.As(err, &untrusted) || untrusted.Trust != tc.want || untrusted.Object != "ConfigMap/istio-system/"+RecordName ||
				!strings.Contains(err.Error(), "Resume and --rollback stop"):
				t.Errorf("load: %+v %v, want a refusal (%s)", got, err, tc.want)
			}
		})
	}

	// A record from before seals (none kept) is refused the same way.
	f := fakekube.NewStore(ns)
	if _, err := f.Dynamic.Resource(fakekube.ConfigMapsGVR).Namespace("istio-system").Create(ctx, recordObject("istio-system", `{"from":"a","to":"b"}`), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var untrusted *history.UntrustedError
	if _, err := LoadRecord(ctx, f.Client, "istio-system"); !errors.As(err, &untrusted) || untrusted.Trust != history.Unsealed {
		t.Errorf("unsealed: %v", err)
	}
}
