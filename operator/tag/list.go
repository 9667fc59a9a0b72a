package tag

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/revision"
)

// Description is one tag, as `tag list` shows it (revision.Tag: the revision list reads
// tags too, and the checks that import it cannot import this package).
type Description = revision.Tag

// List finds the tags (revision.Tags).
func List(ctx context.Context, c *kube.Client, ns string) ([]Description, error) {
	return revision.Tags(ctx, c, ns)
}

// NamespacesUsing lists the namespaces labelled istio.io/rev=<tag>, sorted.
func NamespacesUsing(ctx context.Context, c *kube.Client, tag string) ([]string, error) {
	return revision.NamespacesUsing(ctx, c, tag)
}

// Objects lists a tag's objects: its MutatingWebhookConfigurations, its
// ValidatingWebhookConfigurations (the default tag's) and its Services in the istio
// namespace, in removal order.
func Objects(ctx context.Context, c *kube.Client, ns, tag string) ([]*unstructured.Unstructured, error) {
	return find(ctx, c, ns, LabelTag+"="+tag, func(*unstructured.Unstructured) bool { return true })
}

// Remove deletes objects (from Objects) and waits for nothing: webhook configurations
// have no dependents, and a Service's endpoints go with it.
func Remove(ctx context.Context, c *kube.Client, objs []*unstructured.Unstructured, dryRun bool) error {
	for _, o := range objs {
		if err := c.Delete(ctx, o, dryRun); err != nil {
			return err
		}
	}
	return nil
}

// UninstallTargets lists the tags an uninstall removes with the revision it removes: the
// tags pointing at revision rev that are served from namespace ns, or with purge every
// tag in the cluster. Tags `tag set` made carry none of the installer's labels, so the
// uninstall's label selector alone would leave them calling a control plane that is gone.
func UninstallTargets(ctx context.Context, c *kube.Client, ns, rev string, purge bool) ([]*unstructured.Unstructured, error) {
	if purge {
		return find(ctx, c, "", LabelTag, func(*unstructured.Unstructured) bool { return true })
	}
	return find(ctx, c, ns, fmt.Sprintf("%s,%s=%s", LabelTag, LabelRev, revName(rev)), func(o *unstructured.Unstructured) bool {
		return o.GetKind() == "Service" || servedFrom(o, ns)
	})
}

// find lists the tag objects matching selector: webhook configurations cluster-wide (those
// keep returns true for), Services in ns (every namespace when ns is empty). Services
// must also be istiod's (app=istiod).
func find(ctx context.Context, c *kube.Client, ns, selector string, keep func(*unstructured.Unstructured) bool) ([]*unstructured.Unstructured, error) {
	// The three lists at once: an uninstall waits for them before it removes anything.
	var services []unstructured.Unstructured
	var servicesErr error
	var listed sync.WaitGroup
	listed.Go(func() { services, servicesErr = c.List(ctx, kube.ServiceGVK, selector+",app=istiod") })
	hooks, err := c.ListKinds(ctx, []schema.GroupVersionKind{kube.MutatingWebhookGVK, kube.ValidatingWebhookGVK}, selector)
	listed.Wait()
	if err != nil {
		return nil, err
	}
	if servicesErr != nil {
		return nil, servicesErr
	}
	var out []*unstructured.Unstructured
	for _, items := range hooks {
		for i := range items {
			if o := &items[i]; keep(o) {
				out = append(out, o)
			}
		}
	}
	for i := range services {
		o := &services[i]
		o.SetGroupVersionKind(kube.ServiceGVK)
		if (ns == "" || o.GetNamespace() == ns) && keep(o) {
			out = append(out, o)
		}
	}
	return out, nil
}

// servedFrom says a webhook configuration calls services in ns (or calls a URL).
func servedFrom(o *unstructured.Unstructured, ns string) bool {
	hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
	for _, h := range hooks {
		m, _ := h.(map[string]any)
		if svcNS, ok, _ := unstructured.NestedString(m, "clientConfig", "service", "namespace"); ok && svcNS != ns {
			return false
		}
	}
	return true
}
