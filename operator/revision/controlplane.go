package revision

import (
	"context"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// ControlPlane is one istiod Deployment found in the cluster.
type ControlPlane struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Revision  string `json:"revision"`
	Version   string `json:"version"`
	Ready     string `json:"ready"`
}

// ControlPlanes lists the istiod Deployments (label app=istiod) in namespace, or in every
// namespace when namespace is empty. The version is the installer's version label when
// present, else the tag of the discovery container's image. It lives here, not in kube:
// finding control planes is knowing what an istiod looks like, which kube does not.
func ControlPlanes(ctx context.Context, c *kube.Client, namespace string) ([]ControlPlane, error) {
	ul, err := c.Dynamic.Resource(appsv1.SchemeGroupVersion.WithResource("deployments")).Namespace(namespace).
		List(ctx, metav1.ListOptions{LabelSelector: "app=istiod"})
	if err != nil {
		return nil, c.ExplainError(fmt.Errorf("listing istiod Deployments: %w", err))
	}
	out := make([]ControlPlane, 0, len(ul.Items))
	for _, u := range ul.Items {
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
			return nil, fmt.Errorf("reading Deployment %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
		cp := ControlPlane{
			Namespace: d.Namespace,
			Name:      d.Name,
			Revision:  ownership.Rev(d.Labels[ownership.LabelRevision]),
			Version:   d.Labels[ownership.LabelVersion],
		}
		if cp.Version == "" {
			for _, ctr := range d.Spec.Template.Spec.Containers {
				if ctr.Name == "discovery" {
					cp.Version = ImageTag(ctr.Image)
				}
			}
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		cp.Ready = fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, want)
		out = append(out, cp)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// ImageTag returns the tag of an image reference ("hub/pilot:1.30.0" -> "1.30.0"),
// ignoring a registry port and a digest.
func ImageTag(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	slash := strings.LastIndex(image, "/")
	if i := strings.LastIndex(image, ":"); i > slash {
		return image[i+1:]
	}
	return "latest"
}
