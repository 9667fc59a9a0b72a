package cmd_test

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func metav1SchemeGVR(kind string) schema.GroupVersionResource {
	resources := map[string]string{"ConfigMap": "configmaps", "ServiceAccount": "serviceaccounts", "Service": "services", "Secret": "secrets"}
	return schema.GroupVersionResource{Version: "v1", Resource: resources[kind]}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func fmtSscanf(s, format string, a ...any) (int, error) { return fmt.Sscanf(s, format, a...) }
