package kube

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// An apply as read needs what was read: without a UID or a resourceVersion it is refused
// unsent (an apply without them would create a missing object).
func TestApplyFieldsAsReadNeedsARead(t *testing.T) {
	c := &Client{}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "n"}}}
	read := obj.DeepCopy()
	if _, err := c.ApplyFieldsAsRead(context.Background(), obj, read, "m", false); err == nil || !strings.Contains(err.Error(), "resourceVersion") {
		t.Errorf("no resourceVersion: %v", err)
	}
	read.SetResourceVersion("7")
	if _, err := c.ApplyFieldsAsRead(context.Background(), obj, read, "m", false); err == nil || !strings.Contains(err.Error(), "UID") {
		t.Errorf("no UID: %v", err)
	}
}
