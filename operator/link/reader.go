package link

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Reader is the identity other clusters' istiods read a cluster as, as the charts render it
// for one istio namespace (upstream's create-remote-secret renders the default profile the
// same way and keeps the same objects): the ServiceAccount istio-reader-service-account
// (base chart) and the ClusterRoles and ClusterRoleBindings named istio-reader-clusterrole*
// (istiod chart), each labelled as the default revision's install labels it, so that a
// later install adopts them rather than refusing them as foreign.
type Reader struct {
	Namespace string
	// Objects are in apply order: the ServiceAccount, the roles, then the bindings.
	Objects []*unstructured.Unstructured
}

// RenderReader renders the reader identity for the istio namespace ns from the charts in
// manifestsDir ("" for the embedded ones).
func RenderReader(manifestsDir, ns, version string) (*Reader, error) {
	res, err := spec.Resolve(spec.Options{ManifestsDir: manifestsDir, Sets: []string{"values.global.istioNamespace=" + ns, "namespace=" + ns}})
	if err != nil {
		return nil, fmt.Errorf("resolving the default profile to render the reader identity: %w", err)
	}
	r, err := render.NewRenderer(manifestsDir)
	if err != nil {
		return nil, err
	}
	manifests, _, err := r.Render(res, component.Base, component.Pilot)
	if err != nil {
		return nil, fmt.Errorf("rendering the reader identity: %w", err)
	}
	owner := ownership.Owner{Namespace: ns, Version: version}
	out := &Reader{Namespace: ns}
	rank := map[string]int{"ServiceAccount": 0, "ClusterRole": 1, "ClusterRoleBinding": 2}
	for _, m := range manifests {
		for _, o := range m.Objects {
			keep := (o.GetKind() == "ServiceAccount" && o.GetName() == ownership.ReaderServiceAccount) ||
				((o.GetKind() == "ClusterRole" || o.GetKind() == "ClusterRoleBinding") && strings.HasPrefix(o.GetName(), ownership.ReaderClusterRolePrefix))
			if !keep {
				continue
			}
			c := o.DeepCopy()
			labels := c.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			for k, v := range owner.Labels(m.Instance.Name) {
				labels[k] = v
			}
			c.SetLabels(labels)
			out.Objects = append(out.Objects, c)
		}
	}
	sort.SliceStable(out.Objects, func(i, j int) bool { return rank[out.Objects[i].GetKind()] < rank[out.Objects[j].GetKind()] })
	if len(out.Objects) == 0 || out.Objects[0].GetKind() != "ServiceAccount" {
		return nil, fmt.Errorf("the charts render no %s in %s (values.global.enableReaderRBAC=false?)", ownership.ReaderServiceAccount, ns)
	}
	return out, nil
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
