package kube

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A given-back object's managers are the snapshot's of the object itself and the live
// ones of its subresources; none at all is one empty entry, which the apiserver reads as
// "clear them" (an empty list would keep the live ones, istioctl's among them).
func TestRestoredManagers(t *testing.T) {
	helm := metav1.ManagedFieldsEntry{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate}
	oldStatus := metav1.ManagedFieldsEntry{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", APIVersion: "v1"}
	newStatus := metav1.ManagedFieldsEntry{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", APIVersion: "v2"}
	ours := metav1.ManagedFieldsEntry{Manager: "istio-operator", Operation: metav1.ManagedFieldsOperationApply}
	for _, tc := range []struct {
		name           string
		snapshot, live []metav1.ManagedFieldsEntry
		want           []metav1.ManagedFieldsEntry
	}{
		{"the snapshot's, the live status", []metav1.ManagedFieldsEntry{helm, oldStatus}, []metav1.ManagedFieldsEntry{helm, ours, newStatus},
			[]metav1.ManagedFieldsEntry{helm, newStatus}},
		{"no status now", []metav1.ManagedFieldsEntry{helm, oldStatus}, []metav1.ManagedFieldsEntry{ours}, []metav1.ManagedFieldsEntry{helm}},
		{"none before", nil, []metav1.ManagedFieldsEntry{ours}, []metav1.ManagedFieldsEntry{{}}},
	} {
		if got := restoredManagers(tc.snapshot, tc.live); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
