package existing

import (
	"testing"

	"github.com/istioctl-installer/istioctl/operator/helmrelease"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExternalManager(t *testing.T) {
	for _, tc := range []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		managers    []string
		want        string
	}{
		{"istioctl, named spec", map[string]string{ownership.LabelManaged: "Reconcile", ownership.LabelOwner: "cp", ownership.LabelRevision: "canary"}, nil, nil,
			`istioctl (install spec "cp", revision canary)`},
		{"istioctl, unnamed spec", map[string]string{ownership.LabelManaged: "Reconcile", ownership.LabelOwner: "unknown"}, nil, nil,
			"istioctl (an unnamed install spec, revision default)"},
		{"Helm release", map[string]string{labelManagedBy: "Helm"}, map[string]string{helmrelease.AnnotationName: "istiod", helmrelease.AnnotationNamespace: "istio-system"}, []string{"helm"},
			"Helm release istio-system/istiod"},
		{"by hand", map[string]string{labelManagedBy: "Helm"}, nil, []string{"kubectl-create", "kubectl-create"}, "field manager kubectl-create"},
		{"several", nil, nil, []string{"b", "a"}, "field managers a, b"},
		{"nothing recorded", nil, nil, nil, "an unknown manager (no field manager recorded)"},
	} {
		var mf []metav1.ManagedFieldsEntry
		for _, m := range tc.managers {
			mf = append(mf, metav1.ManagedFieldsEntry{Manager: m, Operation: metav1.ManagedFieldsOperationUpdate})
		}
		if got := Manager(tc.labels, tc.annotations, mf); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	applied := []metav1.ManagedFieldsEntry{{Manager: "istio-operator", Operation: metav1.ManagedFieldsOperationApply}}
	if !ownership.Ours(nil, applied) || ownership.Ours(nil, []metav1.ManagedFieldsEntry{{Manager: "istio-operator", Operation: metav1.ManagedFieldsOperationUpdate}}) {
		t.Error("Ours: an apply by istio-operator is ours, an update is not")
	}
}

func TestExternalCompatible(t *testing.T) {
	for _, tc := range []struct {
		cp, dp    string
		ok, known bool
	}{
		{"1.30.0", "1.30.0", true, true},
		{"1.30.2", "1.29.1", true, true},  // istiod one minor ahead
		{"1.30.0", "1.28.0", false, true}, // two behind
		{"1.29.0", "1.30.0", false, true}, // proxies newer
		{"2.0.0", "1.30.0", false, true},
		{"1.30.0-distroless", "1.30.0", true, true},
		{"latest", "1.30.0", true, false},
	} {
		ok, known, why := Compatible(tc.cp, tc.dp)
		if ok != tc.ok || known != tc.known || why == "" {
			t.Errorf("Compatible(%s, %s) = %v, %v, %q", tc.cp, tc.dp, ok, known, why)
		}
	}
}
