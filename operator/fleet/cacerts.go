package fleet

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/bounded"
)

// Secret is the cacerts Secret istiod signs with, in namespace, read from the set's files:
// the one place the CA key is read, and it goes nowhere but this Secret.
func (cc *CACerts) Secret(namespace string) (*corev1.Secret, error) {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.DefaultCASecret, Namespace: namespace},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{},
	}
	for _, k := range CACertsFiles {
		b, err := bounded.ReadFile(cc.Files[k])
		if err != nil {
			return nil, fmt.Errorf("cacerts %s: %w", cc.Dir, err)
		}
		s.Data[k] = b
	}
	return s, nil
}
