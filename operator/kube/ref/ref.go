// Package ref names Kubernetes objects: one reference type (group, kind, namespace, name)
// with one string form and its parse. It is a leaf beside kube, not part of it: packages
// that only name objects (history, translate, check results, the printer's views) import
// it without the cluster client.
package ref

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Ref is one object's identity. The value itself is the key that compares objects (a map
// key), group included: Istio's Gateway and the Gateway API's never match. Namespace is
// empty for a cluster-scoped object.
type Ref struct {
	Group, Kind, Namespace, Name string
}

// New refers to an object of a kind named without its group: objects people read about
// (Deployment, Secret), not compared with others.
func New(kind, namespace, name string) Ref {
	return Ref{Kind: kind, Namespace: namespace, Name: name}
}

// Of refers to o.
func Of(o *unstructured.Unstructured) Ref {
	return Ref{Group: o.GroupVersionKind().Group, Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
}

// OfGVK refers to the object name of gvk in namespace.
func OfGVK(gvk schema.GroupVersionKind, namespace, name string) Ref {
	return Ref{Group: gvk.Group, Kind: gvk.Kind, Namespace: namespace, Name: name}
}

// String is the one string form: Kind/namespace/name, Kind/name when cluster-scoped. The
// group is left out: it is the name every message, event and record has printed since the
// first release (kubectl's kind/name, namespaced); identity is the value, not this string.
func (r Ref) String() string {
	if r.Namespace != "" {
		return r.Kind + "/" + r.Namespace + "/" + r.Name
	}
	return r.Kind + "/" + r.Name
}

// Parse reads String's form back: Kind/namespace/name or Kind/name (no group: the form
// has none).
func Parse(s string) (Ref, error) {
	parts := strings.Split(s, "/")
	for _, p := range parts {
		if p == "" {
			return Ref{}, fmt.Errorf("object reference %q: want Kind/namespace/name or Kind/name", s)
		}
	}
	switch len(parts) {
	case 2:
		return New(parts[0], "", parts[1]), nil
	case 3:
		return New(parts[0], parts[1], parts[2]), nil
	}
	return Ref{}, fmt.Errorf("object reference %q: want Kind/namespace/name or Kind/name", s)
}
