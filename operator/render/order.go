package render

import (
	"bytes"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kindRank orders output as upstream's manifest generate does: CRDs first, Services last,
// every kind not named here with Deployment.
var kindRank = map[string]int{
	"CustomResourceDefinition":       0,
	"ServiceAccount":                 1,
	"ClusterRole":                    1,
	"ClusterRoleBinding":             2,
	"ValidatingWebhookConfiguration": 3,
	"ConfigMap":                      4,
	"Deployment":                     5,
	"HorizontalPodAutoscaler":        6,
	"Service":                        7,
}

func rank(kind string) int {
	if r, ok := kindRank[kind]; ok {
		return r
	}
	return kindRank["Deployment"]
}

// Sort orders objects by kind rank, then group, kind, namespace and name.
func Sort(objs []*unstructured.Unstructured) {
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := objs[i], objs[j]
		if ra, rb := rank(a.GetKind()), rank(b.GetKind()); ra != rb {
			return ra < rb
		}
		ga, gb := a.GroupVersionKind().Group, b.GroupVersionKind().Group
		if ga != gb {
			return ga < gb
		}
		if a.GetKind() != b.GetKind() {
			return a.GetKind() < b.GetKind()
		}
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
}

// YAML prints objects as one stream, keys sorted, separated by ---.
func YAML(objs []*unstructured.Unstructured) ([]byte, error) {
	var buf bytes.Buffer
	for i, o := range objs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		if raw, ok := pristine.Load(o); ok {
			buf.Write(raw.([]byte))
			continue
		}
		// The same text sigs.k8s.io/yaml's Marshal gives (keys sorted, its style of lists),
		// without its detour through JSON, which cost most of printing a render.
		b, err := marshal(o.Object)
		if err != nil {
			return nil, err
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

// All flattens manifests into one sorted list.
func All(ms []Manifest) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, m := range ms {
		out = append(out, m.Objects...)
	}
	Sort(out)
	return out
}
