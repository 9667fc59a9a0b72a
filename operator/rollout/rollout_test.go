package rollout

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestBatches(t *testing.T) {
	for _, tc := range []struct {
		nodes []string
		size  int
		want  string
	}{
		{nil, 1, "[]"},
		{[]string{"a", "b", "c"}, 0, "[[a] [b] [c]]"},
		{[]string{"a", "b", "c"}, 1, "[[a] [b] [c]]"},
		{[]string{"a", "b", "c"}, 2, "[[a b] [c]]"},
		{[]string{"a", "b", "c"}, 5, "[[a b c]]"},
	} {
		if got := fmt.Sprint(batches(tc.nodes, tc.size)); got != tc.want {
			t.Errorf("batches(%v, %d) = %s, want %s", tc.nodes, tc.size, got, tc.want)
		}
	}
}

func TestNodeOf(t *testing.T) {
	pinned := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n2"}}}}}}}}
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want string
	}{
		{"bound", corev1.PodSpec{NodeName: "n1", Affinity: pinned}, "n1"},
		{"pinned, not scheduled yet", corev1.PodSpec{Affinity: pinned}, "n2"},
		{"neither", corev1.PodSpec{}, ""},
	} {
		if got := nodeOf(&corev1.Pod{Spec: tc.spec}); got != tc.want {
			t.Errorf("%s: nodeOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestStateOldAndCurrent(t *testing.T) {
	now := metav1.Now()
	pod := func(hash string, deleting bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: hash, Labels: map[string]string{hashLabel: hash}}}
		if deleting {
			p.DeletionTimestamp = &now
		}
		return p
	}
	st := &state{hash: "new", byNode: map[string][]corev1.Pod{
		"a": {pod("old", false)},
		"b": {pod("old", true), pod("new", false)},
		"c": {pod("new", false)},
	}}
	for _, tc := range []struct {
		node    string
		old     bool
		current string
	}{{"a", true, ""}, {"b", false, "new"}, {"c", false, "new"}} {
		cur := ""
		if p := st.current(tc.node); p != nil {
			cur = p.Name
		}
		if st.old(tc.node) != tc.old || cur != tc.current {
			t.Errorf("node %s: old %v current %q, want %v %q", tc.node, st.old(tc.node), cur, tc.old, tc.current)
		}
	}
	if got := fmt.Sprint(st.nodes()); got != "[a b c]" {
		t.Errorf("nodes = %s", got)
	}
}

func TestOnDelete(t *testing.T) {
	ds := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "DaemonSet",
		"metadata": map[string]any{"name": "z"},
		"spec":     map[string]any{"updateStrategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": int64(1)}}}}}
	got := OnDelete(ds)
	s, _, _ := unstructured.NestedMap(got.Object, "spec", "updateStrategy")
	if fmt.Sprint(s) != "map[type:OnDelete]" || got.GetAnnotations()[Annotation] == "" {
		t.Errorf("OnDelete: strategy %v, annotations %v", s, got.GetAnnotations())
	}
	if typ, _, _ := unstructured.NestedString(ds.Object, "spec", "updateStrategy", "type"); typ != "RollingUpdate" {
		t.Error("OnDelete changed the rendered object")
	}
}
