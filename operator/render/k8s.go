package render

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/component"
)

// ApplyK8sSettings patches the instance's rendered objects with its components.<c>.k8s
// settings. (The settings that feed chart values — replicaCount, hpaSpec, gateway ports —
// are already in the values.)
func ApplyK8sSettings(objs []*unstructured.Unstructured, inst component.Instance) error {
	return nil
}
