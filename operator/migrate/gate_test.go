package migrate

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func pod(status string, ready bool) *unstructured.Unstructured {
	cond := "False"
	if ready {
		cond = "True"
	}
	p := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p"},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": cond}}}}}
	if status != "" {
		p.SetAnnotations(map[string]string{annotationStatus: status})
	}
	return p
}

func TestPodOn(t *testing.T) {
	for _, tc := range []struct {
		name, status string
		ready        bool
		rev, want    string
	}{
		{"ready on the revision", `{"revision":"b"}`, true, "b", ""},
		{"not ready", `{"revision":"b"}`, false, "b", "not Ready"},
		{"the old revision", `{"revision":"a"}`, true, "b", "injected by revision a"},
		{"not injected", "", true, "b", "not injected"},
		{"the default revision, named either way", `{"revision":""}`, true, "default", ""},
		{"an unreadable status", `{`, true, "b", "unreadable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := podOn(pod(tc.status, tc.ready), tc.rev)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("podOn: %q, want %q", got, tc.want)
			}
		})
	}
}
