package link

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
)

// Reader is the identity other clusters' istiods read a cluster as, as the charts render it
// for one istio namespace (upstream's create-remote-secret renders the default profile the
// same way and keeps the same objects): the ServiceAccount istio-reader-service-account
// (base chart) and the ClusterRoles and ClusterRoleBindings named istio-reader-clusterrole*
// (istiod chart), each labelled as the default revision's install labels it, so that a
// later install adopts them rather than refusing them as foreign. readerchart renders it.
type Reader struct {
	Namespace string
	// Objects are in apply order: the ServiceAccount, the roles, then the bindings.
	Objects []*unstructured.Unstructured
}

// DeepCopy is a copy of r that shares nothing with it.
func (r *Reader) DeepCopy() *Reader {
	out := &Reader{Namespace: r.Namespace, Objects: make([]*unstructured.Unstructured, len(r.Objects))}
	for i, o := range r.Objects {
		out.Objects[i] = o.DeepCopy()
	}
	return out
}

// Access is one thing a role grants: a verb on a resource of an API group.
type Access struct {
	Group, Resource, Verb string
}

func (a Access) String() string {
	res := a.Resource
	if a.Group != "" {
		res += "." + a.Group
	}
	return a.Verb + " " + res
}

// Access lists, sorted and once each, what the reader's ClusterRoles grant: one entry per
// verb, resource and group of each rule. The link checks ask, as the link's identity,
// for exactly these, so they follow the charts rather than a list kept by hand.
func (r *Reader) Access() []Access {
	seen := map[Access]bool{}
	var out []Access
	for _, o := range r.Objects {
		if o.GetKind() != "ClusterRole" {
			continue
		}
		rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
		for _, rule := range rules {
			m, _ := rule.(map[string]any)
			for _, g := range strs(m["apiGroups"]) {
				for _, res := range strs(m["resources"]) {
					for _, v := range strs(m["verbs"]) {
						a := Access{Group: g, Resource: res, Verb: v}
						if !seen[a] {
							seen[a] = true
							out = append(out, a)
						}
					}
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Bindings names the reader's ClusterRoleBindings as ClusterRoleBinding/name.
func (r *Reader) Bindings() []string {
	var out []string
	for _, o := range r.Objects {
		if o.GetKind() == "ClusterRoleBinding" {
			out = append(out, ref.Of(o).String())
		}
	}
	return out
}

// Names lists the reader's objects as Kind/name.
func (r *Reader) Names() []string {
	var out []string
	for _, o := range r.Objects {
		out = append(out, ref.Of(o).String())
	}
	return out
}

func strs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
