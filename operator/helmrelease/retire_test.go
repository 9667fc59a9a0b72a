package helmrelease

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/pkg/testing/fakekube"
)

// TestRetireDeletesAsRead: every record delete carries the UID and resourceVersion Get read;
// a record that changed since and is still the release's goes with the new ones; one
// re-created by someone else, or no longer labelled as the release's, is left and returned.
func TestRetireDeletesAsRead(t *testing.T) {
	record := func(v, uid, rv, name string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(kube.SecretGVK)
		o.SetNamespace("istio-system")
		o.SetName("sh.helm.release.v1.istiod." + v)
		o.SetUID(types.UID(uid))
		o.SetResourceVersion(rv)
		o.SetLabels(map[string]string{labelOwner: "helm", labelName: name, "version": strings.TrimPrefix(v, "v")})
		return o
	}
	read := []*unstructured.Unstructured{record("v1", "u1", "1", "istiod"), record("v2", "u2", "1", "istiod"),
		record("v3", "u3", "1", "istiod"), record("v4", "u4", "1", "istiod")}
	now := []*unstructured.Unstructured{
		record("v1", "u1", "1", "istiod"), // unchanged
		record("v2", "u2", "5", "istiod"), // changed, still the release's
		record("v3", "x3", "1", "istiod"), // re-created
		record("v4", "u4", "2", "other"),  // another release's now
	}
	fc, err := fakekube.New(now)
	if err != nil {
		t.Fatal(err)
	}
	left, err := Retire(context.Background(), fc.Client, &Release{Name: "istiod", Namespace: "istio-system", records: read}, false)
	if err != nil {
		t.Fatal(err)
	}
	var sent []string
	for _, d := range fc.Deletes() {
		p := d.Options.Preconditions
		if p == nil || p.UID == nil || p.ResourceVersion == nil {
			t.Fatalf("delete of %s without preconditions", d.Name)
		}
		sent = append(sent, fmt.Sprintf("%s:%s/%s", strings.TrimPrefix(d.Name, "sh.helm.release.v1.istiod."), *p.UID, *p.ResourceVersion))
	}
	if got, want := strings.Join(sent, " "), "v1:u1/1 v2:u2/1 v2:u2/5 v3:u3/1 v4:u4/1"; got != want {
		t.Errorf("deletes %q, want %q", got, want)
	}
	var names []string
	for _, l := range left {
		names = append(names, l.Planned.GetName()+"="+string(l.Live.GetUID()))
	}
	if got, want := strings.Join(names, " "), "sh.helm.release.v1.istiod.v3=x3 sh.helm.release.v1.istiod.v4=u4"; got != want {
		t.Errorf("left %q, want %q", got, want)
	}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	for v, want := range map[string]bool{"v1": false, "v2": false, "v3": true, "v4": true} {
		if got := fc.Exists(secrets, "istio-system", "sh.helm.release.v1.istiod."+v); got != want {
			t.Errorf("%s exists: %v, want %v", v, got, want)
		}
	}
}
