package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
)

// StartWatchCache makes the apiserver start building the watch cache of a CRD's custom
// resources, and returns without waiting for it.
//
// The apiserver builds that cache the first time anything asks for the resource, and
// until it has read them all it refuses the lists only it may answer ("storage is
// (re)initializing", 429). The CRD finalizer's list of the instances is one: a CRD
// deleted before anything asked for its resources finds the cache not built, and the
// finalizer retries with exponential back-off (an uninstall once waited 292 s on one
// CRD). A list with a limit is answered from etcd whatever the cache's state, so asking
// for one object starts the cache at the cost of one small request, and by the time the
// CRD is deleted the cache is usually ready.
//
// The first request for any served version builds the caches of all of them, the storage
// version's (which the finalizer lists) among them.
func (c *Client) StartWatchCache(ctx context.Context, crd *unstructured.Unstructured) error {
	gvr, err := c.crdResource(ctx, crd)
	if err != nil {
		return err
	}
	_, err = c.Metadata.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
	return err
}

// crdResource is the resource a CRD serves: from its spec (servedResource) when crd has
// one; for a metadata-only copy, from its name (plural.group, as the apiserver requires)
// and discovery, any served version doing for a list of its objects; else from the live
// CRD.
func (c *Client) crdResource(ctx context.Context, crd *unstructured.Unstructured) (schema.GroupVersionResource, error) {
	if gvr, err := servedResource(crd); err == nil {
		return gvr, nil
	}
	if plural, group, ok := strings.Cut(crd.GetName(), "."); ok {
		if gvr, err := c.Mapper.ResourceFor(schema.GroupVersionResource{Group: group, Resource: plural}); err == nil {
			return gvr, nil
		}
	}
	live, err := c.Get(ctx, crd)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	if live == nil {
		return schema.GroupVersionResource{}, fmt.Errorf("%s: %w", ref.Of(crd).String(), errCRDGone)
	}
	return servedResource(live)
}

// errCRDGone: the CRD whose resource was asked for no longer exists.
var errCRDGone = errors.New("not found")

// servedResource is the resource of a CRD at its storage version (any served one if none
// is marked).
func servedResource(crd *unstructured.Unstructured) (schema.GroupVersionResource, error) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	version := ""
	for _, v := range versions {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		if served, _ := m["served"].(bool); !served {
			continue
		}
		if storage, _ := m["storage"].(bool); storage || version == "" {
			version = name
		}
	}
	if group == "" || plural == "" || version == "" {
		return schema.GroupVersionResource{}, fmt.Errorf("%s: serves no version", ref.Of(crd).String())
	}
	return schema.GroupVersionResource{Group: group, Version: version, Resource: plural}, nil
}
