package history

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/fakekube"
)

// TestTrimDeletesAsListed: a trim deletes each old record with the UID and resourceVersion
// it listed; one re-created since is left.
func TestTrimDeletesAsListed(t *testing.T) {
	record := func(n int, uid string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(kube.SecretGVK)
		o.SetNamespace("istio-system")
		o.SetName(SecretName("default", n))
		o.SetUID(types.UID(uid))
		o.SetResourceVersion("1")
		o.SetLabels(map[string]string{LabelRecord: "true", LabelManagedBy: ManagedBy, ownership.LabelRevision: "default", LabelNumber: strconv.Itoa(n)})
		return o
	}
	listed := map[int]*unstructured.Unstructured{1: record(1, "a"), 2: record(2, "b"), 3: record(3, "c")}
	fc, err := fakekube.New([]*unstructured.Unstructured{record(1, "a"), record(2, "other"), record(3, "c")})
	if err != nil {
		t.Fatal(err)
	}
	s := &Store{Client: fc.Client, Namespace: "istio-system"}
	if err := s.trim(context.Background(), "default", ToTrim([]int{1, 2, 3}, 1, nil), listed); err != nil {
		t.Fatal(err)
	}
	var sent []string
	for _, d := range fc.Deletes() {
		p := d.Options.Preconditions
		if p == nil || p.UID == nil || p.ResourceVersion == nil {
			t.Fatalf("delete of %s without preconditions", d.Name)
		}
		sent = append(sent, fmt.Sprintf("%s:%s/%s", d.Name, *p.UID, *p.ResourceVersion))
	}
	if got, want := strings.Join(sent, " "), "istioctl-install-default-v1:a/1 istioctl-install-default-v2:b/1"; got != want {
		t.Errorf("deletes %q, want %q", got, want)
	}
}
