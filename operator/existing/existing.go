package existing

import (
	"context"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/helmrelease"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/readiness"
	"github.com/istioctl-installer/istioctl/operator/revision"
)

// The label other tools use to say they manage an object (Helm's annotations say which
// release).
const labelManagedBy = "app.kubernetes.io/managed-by"

// Manager names who manages an object, for messages: "istioctl (install spec "cp",
// revision default)", "Helm release istio-system/istiod", "field manager kubectl-create".
func Manager(labels, annotations map[string]string, managed []metav1.ManagedFieldsEntry) string {
	if ownership.Ours(labels, managed) {
		owner := "an unnamed install spec"
		if n := labels[ownership.LabelOwner]; n != "" && n != "unknown" {
			owner = fmt.Sprintf("install spec %q", n)
		}
		return fmt.Sprintf("istioctl (%s, revision %s)", owner, ownership.Rev(labels[ownership.LabelRevision]))
	}
	if name := annotations[helmrelease.AnnotationName]; name != "" {
		return fmt.Sprintf("Helm release %s/%s", annotations[helmrelease.AnnotationNamespace], name)
	}
	seen := map[string]bool{}
	var managers []string
	for _, mf := range managed {
		if mf.Subresource == "" && !seen[mf.Manager] {
			seen[mf.Manager] = true
			managers = append(managers, mf.Manager)
		}
	}
	sort.Strings(managers)
	switch {
	case len(managers) == 1:
		return "field manager " + managers[0]
	case len(managers) > 1:
		return "field managers " + strings.Join(managers, ", ")
	case labels[labelManagedBy] != "":
		return labels[labelManagedBy]
	}
	return "an unknown manager (no field manager recorded)"
}

// ManagerOf is Manager for a live object.
func ManagerOf(o metav1.Object) string {
	return Manager(o.GetLabels(), o.GetAnnotations(), o.GetManagedFields())
}

// Piece is an installed object an install relies on.
type Piece struct {
	// Object is Kind/namespace/name.
	Object string
	// Live is nil when the object does not exist.
	Live     *unstructured.Unstructured
	Revision string
	Version  string
	// Ready, with the readiness verdict's message.
	Ready   bool
	Status  string
	Manager string
}

// ControlPlane finds the istiod of a revision in namespace ("default" or "" for the default
// revision). When there is none, the Piece has no Live object and others lists the control
// planes that run in the namespace instead (Deployment name and revision).
func ControlPlane(ctx context.Context, c *kube.Client, namespace, rev string) (p *Piece, others []string, err error) {
	rev = ownership.Rev(rev)
	cps, err := revision.ControlPlanes(ctx, c, namespace)
	if err != nil {
		return nil, nil, err
	}
	name := "istiod"
	if rev != ownership.DefaultRevision {
		name += "-" + rev
	}
	p = &Piece{Object: ref.New("Deployment", namespace, name).String(), Revision: rev}
	for _, cp := range cps {
		if cp.Revision != rev {
			others = append(others, fmt.Sprintf("%s (rev %s)", cp.Name, cp.Revision))
			continue
		}
		p.Object, p.Version = ref.New("Deployment", cp.Namespace, cp.Name).String(), cp.Version
		if err := p.read(ctx, c, kube.DeploymentGVK, cp.Namespace, cp.Name); err != nil {
			return nil, nil, err
		}
		return p, nil, nil
	}
	return p, others, nil
}

// DaemonSet finds a node agent (the CNI's istio-cni-node).
func DaemonSet(ctx context.Context, c *kube.Client, namespace, name string) (*Piece, error) {
	p := &Piece{Object: ref.New("DaemonSet", namespace, name).String()}
	if err := p.read(ctx, c, kube.DaemonSetGVK, namespace, name); err != nil {
		return nil, err
	}
	if p.Live != nil {
		p.Revision = p.Live.GetLabels()[ownership.LabelRevision]
		p.Version = p.Live.GetLabels()[ownership.LabelVersion]
	}
	return p, nil
}

// CRDs finds the CustomResourceDefinitions of the given names, in that order.
func CRDs(ctx context.Context, c *kube.Client, names []string) ([]*Piece, error) {
	out := make([]*Piece, 0, len(names))
	for _, n := range names {
		p := &Piece{Object: ref.New("CustomResourceDefinition", "", n).String()}
		if err := p.read(ctx, c, kube.CRDGVK, "", n); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (p *Piece) read(ctx context.Context, c *kube.Client, gvk schema.GroupVersionKind, namespace, name string) error {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	o.SetNamespace(namespace)
	o.SetName(name)
	live, err := c.Get(ctx, o)
	if err != nil || live == nil {
		return err
	}
	p.Live = live
	v := readiness.Check(live)
	p.Ready, p.Status = v.Status == readiness.Ready, v.Message
	p.Manager = ManagerOf(live)
	return nil
}
