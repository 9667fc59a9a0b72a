package link

import (
	"context"
	"fmt"
	"regexp"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// DefaultClusterName is the charts' multiCluster.clusterName when none is set: istiod's
// CLUSTER_ID and every sidecar's ISTIO_META_CLUSTER_ID.
const DefaultClusterName = "Kubernetes"

func fromUnstructured(o *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into)
}

// ClusterUID is the one reader of a cluster's identity: its kube-system Namespace's UID,
// upstream's ID for a cluster given no --name. Unlike a kubeconfig context's name it is
// the cluster's own: what a fleet's links record of the cluster whose credentials they
// hold, and the only ground on which a run takes one cluster for another.
func ClusterUID(ctx context.Context, c *kube.Client) (string, error) {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(kube.NamespaceGVK)
	o.SetName("kube-system")
	live, err := c.Get(ctx, o)
	if err != nil {
		return "", err
	}
	if live == nil {
		return "", fmt.Errorf("the cluster at %s has no kube-system namespace to take its ID from: pass --name", c.Host)
	}
	return string(live.GetUID()), nil
}

// NameSources are what can say a cluster's own name without asking it, most believed
// first. A caller gives the ones it has: a spec, what is installed, or both.
type NameSources struct {
	// Values are a spec's values: values.global.multiCluster.clusterName.
	Values map[string]any
	// Objects are installed or rendered objects: the CLUSTER_ID of istiod's Deployments.
	Objects []*unstructured.Unstructured
}

// OwnName is the one reader of a cluster's name from NameSources: the spec's clusterName,
// else the CLUSTER_ID of the first istiod Deployment among Objects. The charts' default
// (DefaultClusterName) is no name of the cluster's own: "" says it has none. The live
// control plane's word (its pods, its injector) is ClusterName's.
func OwnName(src NameSources) string {
	g, _ := src.Values["global"].(map[string]any)
	mc, _ := g["multiCluster"].(map[string]any)
	if name, _ := mc["clusterName"].(string); name != "" && name != DefaultClusterName {
		return name
	}
	for _, o := range src.Objects {
		if o.GetKind() != "Deployment" || o.GetLabels()["app"] != "istiod" {
			continue
		}
		ctrs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range ctrs {
			m, _ := c.(map[string]any)
			env, _ := m["env"].([]any)
			for _, e := range env {
				em, _ := e.(map[string]any)
				if em["name"] == "CLUSTER_ID" {
					if v, _ := em["value"].(string); v != DefaultClusterName {
						return v
					}
				}
			}
		}
	}
	return ""
}

// Name is a cluster's multiCluster.clusterName as its control plane shows it, and where
// it was read.
type Name struct {
	Name, From string
}

// injectPath finds the cluster ID in an injector's path, /inject/cluster/<id>/net/<net>.
var injectPath = regexp.MustCompile(`/inject/cluster/([^/]+)/net/`)

// ClusterName reads the cluster's name from its control plane in the istio namespace ns:
// the CLUSTER_ID of its istiod pods (several revisions may differ: every name found), else
// for a remote without istiod the cluster in its injector's path. None when neither says,
// or when the caller may read neither (the reader role reads pods, and a remote's webhooks).
func ClusterName(ctx context.Context, c *kube.Client, ns string) ([]Name, error) {
	pods, err := istiodPods(ctx, c, ns)
	if err != nil {
		return nil, err
	}
	if out := namesOf(pods, ns); len(out) > 0 {
		return out, nil
	}
	seen := map[string]bool{}
	var out []Name
	hooks, err := c.List(ctx, kube.MutatingWebhookGVK, "app=sidecar-injector")
	if err != nil && !apierrors.IsForbidden(err) {
		return nil, err
	}
	for _, h := range hooks {
		ws, _, _ := unstructured.NestedSlice(h.Object, "webhooks")
		for _, w := range ws {
			m, _ := w.(map[string]any)
			path, _, _ := unstructured.NestedString(m, "clientConfig", "service", "path")
			if path == "" {
				path, _, _ = unstructured.NestedString(m, "clientConfig", "url")
			}
			if sub := injectPath.FindStringSubmatch(path); sub != nil && !seen[sub[1]] {
				seen[sub[1]] = true
				out = append(out, Name{Name: sub[1], From: "the injection path of MutatingWebhookConfiguration " + h.GetName()})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Secrets lists the link Secrets (istio/multiCluster=true): in every namespace, as a
// Secret outside the istio namespace is one istiod never reads; only in ns when listing
// every namespace is forbidden (everywhere then says so).
func Secrets(ctx context.Context, c *kube.Client, ns string) (links []Link, everywhere bool, err error) {
	selector := ownership.LabelMultiCluster + "=true"
	items, err := c.List(ctx, kube.SecretGVK, selector)
	everywhere = err == nil
	if apierrors.IsForbidden(err) {
		items, err = c.ListIn(ctx, kube.SecretGVK, ns, selector)
	}
	if err != nil {
		return nil, false, err
	}
	sort.Slice(items, func(i, j int) bool {
		a, b := items[i], items[j]
		return a.GetNamespace()+"/"+a.GetName() < b.GetNamespace()+"/"+b.GetName()
	})
	for i := range items {
		links = append(links, FromSecret(&items[i])...)
	}
	return links, everywhere, nil
}

// SecretsIn lists the link Secrets of namespace ns as objects (for --apply-to and uninstall).
func SecretsIn(ctx context.Context, c *kube.Client, ns string) ([]unstructured.Unstructured, error) {
	return c.ListIn(ctx, kube.SecretGVK, ns, ownership.LabelMultiCluster+"=true")
}

// Written says s is a link Secret this istioctl wrote: labelled istio/multiCluster=true and
// applied by LinkFieldManager (its managedFields say so). A fleet deletes no other Secret:
// anyone who may write Secrets can set a label, and only our applies carry our manager.
func Written(s *unstructured.Unstructured) bool {
	if (s.GetKind() != "" && s.GetKind() != "Secret") || s.GetLabels()[ownership.LabelMultiCluster] != "true" {
		return false
	}
	for _, m := range s.GetManagedFields() {
		if m.Manager == ownership.LinkFieldManager && m.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}
