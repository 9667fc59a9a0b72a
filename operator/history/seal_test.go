package history_test

import (
	"context"
	"encoding/base64"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ktesting "k8s.io/client-go/testing"

	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/fakekube"
)

const sealNS = "istio-system"

func namespace(name string) *unstructured.Unstructured {
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(history.SealHolder)
	ns.SetName(name)
	return ns
}

// sealedStore is a store over a fake cluster holding the istio namespace and n records of
// the default revision written by Store.Create.
func sealedStore(t *testing.T, n int) (*fakekube.Store, *history.Store) {
	t.Helper()
	f := fakekube.NewStore(namespace(sealNS))
	s := &history.Store{Client: f.Client, Namespace: sealNS}
	for i := 0; i < n; i++ {
		r := &history.Record{Time: time.Now().UTC(), Action: history.ActionInstall, Outcome: history.Succeeded, Profile: "default", Spec: "spec: {}\n"}
		if err := s.Create(context.Background(), r, 0); err != nil {
			t.Fatal(err)
		}
	}
	return f, s
}

// trusts lists the records as "secret name by their number:trust", sorted.
func trusts(t *testing.T, s *history.Store) []string {
	t.Helper()
	rs, err := s.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		out = append(out, strings.Join([]string{history.SecretName(r.Revision, r.Number), string(r.Trust)}, ":"))
	}
	sort.Strings(out) // two records may say they have one number
	return out
}

func secretOf(t *testing.T, f *fakekube.Store, name string) *unstructured.Unstructured {
	t.Helper()
	o, err := f.Dynamic.Resource(fakekube.SecretsGVR).Namespace(sealNS).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// payloadOf is a record's encoded payload, as its Secret holds it.
func payloadOf(t *testing.T, r *history.Record) string {
	t.Helper()
	b, err := history.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// forge writes a record Secret as another account would: through the API, no seal.
func forge(t *testing.T, f *fakekube.Store, like *unstructured.Unstructured, name string, payload string) {
	t.Helper()
	o := like.DeepCopy()
	o.SetName(name)
	o.SetUID("")
	o.SetResourceVersion("")
	if err := unstructured.SetNestedField(o.Object, payload, "data", history.DataKey); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Dynamic.Resource(fakekube.SecretsGVR).Namespace(sealNS).Create(context.Background(), o, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestSealedRecords: what Store.Create writes is sealed; a record written by another
// account, changed since, copied under another name or deleted and re-created with the same
// bytes is not, whatever it says of itself, and its refusal names it and what to do.
func TestSealedRecords(t *testing.T) {
	ctx := context.Background()
	forged := &history.Record{Number: 99, Revision: "default", Action: history.ActionInstall, Outcome: history.Succeeded,
		Profile: "default", Spec: "spec: {}\n", Trust: history.Sealed}
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, f *fakekube.Store)
		want   []string
	}{
		{"as written", func(*testing.T, *fakekube.Store) {}, []string{"istioctl-install-default-v1:sealed", "istioctl-install-default-v2:sealed"}},
		{"a forged record claiming a seal", func(t *testing.T, f *fakekube.Store) {
			forge(t, f, secretOf(t, f, "istioctl-install-default-v1"), "istioctl-install-default-v99", payloadOf(t, forged))
		}, []string{"istioctl-install-default-v1:sealed", "istioctl-install-default-v2:sealed", "istioctl-install-default-v99:unsealed"}},
		{"a record changed since", func(t *testing.T, f *fakekube.Store) {
			o := secretOf(t, f, "istioctl-install-default-v2")
			changed := *forged
			changed.Number = 2
			_ = unstructured.SetNestedField(o.Object, payloadOf(t, &changed), "data", history.DataKey)
			if _, err := f.Dynamic.Resource(fakekube.SecretsGVR).Namespace(sealNS).Update(ctx, o, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}, []string{"istioctl-install-default-v1:sealed", "istioctl-install-default-v2:changed"}},
		{"a record deleted and re-created with its bytes", func(t *testing.T, f *fakekube.Store) {
			o := secretOf(t, f, "istioctl-install-default-v2")
			if err := f.Dynamic.Resource(fakekube.SecretsGVR).Namespace(sealNS).Delete(ctx, o.GetName(), metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			data, _, _ := unstructured.NestedString(o.Object, "data", history.DataKey)
			forge(t, f, o, o.GetName(), data)
		}, []string{"istioctl-install-default-v1:sealed", "istioctl-install-default-v2:changed"}},
		{"a sealed record's bytes under the name of a record trimmed since", func(t *testing.T, f *fakekube.Store) {
			o := secretOf(t, f, "istioctl-install-default-v1")
			data, _, _ := unstructured.NestedString(o.Object, "data", history.DataKey)
			forge(t, f, o, "istioctl-install-default-v7", data)
		}, []string{"istioctl-install-default-v1:sealed", "istioctl-install-default-v1:unsealed", "istioctl-install-default-v2:sealed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, s := sealedStore(t, 2)
			tc.tamper(t, f)
			if got := trusts(t, s); strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("trust %v, want %v", got, tc.want)
			}
		})
	}

	f, s := sealedStore(t, 1)
	forge(t, f, secretOf(t, f, "istioctl-install-default-v1"), "istioctl-install-default-v99", payloadOf(t, forged))
	rs, err := s.List(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	last := rs[len(rs)-1]
	var untrusted *history.UntrustedError
	if err := last.Untrusted(); !errors.As(err, &untrusted) || untrusted.Object != "Secret/istio-system/istioctl-install-default-v99" ||
		!strings.Contains(err.Error(), "no digest of it is kept on Namespace istio-system") || !strings.Contains(err.Error(), "istioctl install -f") {
		t.Errorf("refusal: %v", err)
	}
	if rs[0].Untrusted() != nil {
		t.Errorf("the sealed record is refused: %v", rs[0].Untrusted())
	}
	// A copy of a sealed record under another name is refused by its own name.
	forge(t, f, secretOf(t, f, "istioctl-install-default-v1"), "istioctl-install-default-v7", payloadOf(t, rs[0]))
	rs, _ = s.List(ctx, "default")
	for _, r := range rs {
		if r.Trust != history.Sealed && (!errors.As(r.Untrusted(), &untrusted) || untrusted.Object == "Secret/istio-system/istioctl-install-default-v1") {
			t.Errorf("the copy refused as %v", r.Untrusted())
		}
	}
	// A forged newest record is no reason to skip a record: the next install writes one.
	if history.Repeats(rs, &history.Record{Outcome: history.Succeeded, Spec: "spec: {}\n"}) {
		t.Error("Repeats trusts a forged newest record")
	}
}

// TestSealUpdateAndTrim: an update seals the record again; a trim drops the seals of the
// records it removes.
func TestSealUpdateAndTrim(t *testing.T) {
	ctx := context.Background()
	f, s := sealedStore(t, 2)
	rs, _ := s.List(ctx, "default")
	rs[1].Outcome = history.RolledBack
	if err := s.Update(ctx, rs[1]); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(trusts(t, s), " "); got != "istioctl-install-default-v1:sealed istioctl-install-default-v2:sealed" {
		t.Errorf("after an update: %s", got)
	}
	if err := s.Create(ctx, &history.Record{Outcome: history.Succeeded}, 2); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(trusts(t, s), " "); got != "istioctl-install-default-v2:sealed istioctl-install-default-v3:sealed" {
		t.Errorf("after a trim: %s", got)
	}
	ns, err := f.Dynamic.Resource(fakekube.NamespacesGVR).Get(ctx, sealNS, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range ns.GetAnnotations() {
		keys = append(keys, k)
	}
	if len(keys) != 2 || ns.GetAnnotations()[history.SealPrefix+"istioctl-install-default-v1"] != "" {
		t.Errorf("seals kept: %v", keys)
	}
	// Each seal is written as the record is: by istioctl's field manager, a merge patch of
	// the Namespace's annotations only, right after the record's own write.
	var seen []string
	for _, a := range f.Dynamic.Actions() {
		switch a := a.(type) {
		case ktesting.PatchActionImpl:
			if a.Resource.Resource != "namespaces" || a.PatchType != types.MergePatchType || a.PatchOptions.FieldManager != ownership.FieldManager ||
				!strings.HasPrefix(string(a.Patch), `{"metadata":{"annotations":{`) {
				t.Errorf("seal written as %+v", a)
			}
			seen = append(seen, "seal")
		case ktesting.CreateActionImpl:
			seen = append(seen, "create")
		case ktesting.UpdateActionImpl:
			seen = append(seen, "update")
		}
	}
	if got := strings.Join(seen, " "); got != "create seal create seal update seal create seal" {
		t.Errorf("writes: %s", got)
	}
}

// TestSealsUnreadable: when the namespace cannot be read, no record is trusted; when the
// seal cannot be written, Create says so (ErrNotSealed) and the record stays untrusted.
func TestSealsUnreadable(t *testing.T) {
	ctx := context.Background()
	f, s := sealedStore(t, 1)
	forbid := func(verb string) {
		f.Dynamic.PrependReactor(verb, "namespaces", func(ktesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, sealNS, errors.New("no"))
		})
	}
	forbid("patch")
	r := &history.Record{Outcome: history.Succeeded}
	if err := s.Create(ctx, r, 0); !errors.Is(err, history.ErrNotSealed) || r.Number != 2 || !strings.Contains(err.Error(), "Namespace istio-system") {
		t.Errorf("create without the seal: %v (number %d)", err, r.Number)
	}
	if got := strings.Join(trusts(t, s), " "); got != "istioctl-install-default-v1:sealed istioctl-install-default-v2:unsealed" {
		t.Errorf("trust: %s", got)
	}
	forbid("get")
	if got := strings.Join(trusts(t, s), " "); got != "istioctl-install-default-v1:unverified istioctl-install-default-v2:unverified" {
		t.Errorf("unreadable seals: %s", got)
	}
}

// TestSealKeys: a seal's annotation key is a valid one whatever the record's name.
func TestSealKeys(t *testing.T) {
	f := fakekube.NewStore(namespace(sealNS))
	long := strings.Repeat("r", 60)
	for _, name := range []string{"istioctl-install-default-v1", history.SecretName(long, 12)} {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
		o.SetNamespace(sealNS)
		o.SetName(name)
		if err := history.Seal(context.Background(), f.Client, o, []byte("x"), "istioctl", false); err != nil {
			t.Fatal(err)
		}
	}
	ns, _ := f.Dynamic.Resource(fakekube.NamespacesGVR).Get(context.Background(), sealNS, metav1.GetOptions{})
	for k := range ns.GetAnnotations() {
		_, name, _ := strings.Cut(k, "/")
		if !strings.HasPrefix(k, history.SealPrefix) || len(name) > 63 {
			t.Errorf("key %q", k)
		}
	}
	if len(ns.GetAnnotations()) != 2 {
		t.Errorf("seals: %v", ns.GetAnnotations())
	}
}
