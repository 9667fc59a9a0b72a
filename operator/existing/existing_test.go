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
