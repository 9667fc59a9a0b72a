package revision

import (
	"context"
	"sort"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// labelTag names the tag a tag's objects serve.
const labelTag = "istio.io/tag"

// Tag is one revision tag, as `tag list` shows it.
type Tag struct {
	Tag      string `json:"tag"`
	Revision string `json:"revision"`
	// Namespaces are those labelled istio.io/rev=<tag>.
	Namespaces []string `json:"namespaces"`
}

// Tags finds the tags: the MutatingWebhookConfigurations labelled istio.io/tag and the
// tag Services in the istio namespace, sorted by revision, then tag.
func Tags(ctx context.Context, c *kube.Client, ns string) ([]Tag, error) {
	hooks, err := c.List(ctx, kube.MutatingWebhookGVK, labelTag)
	if err != nil {
		return nil, err
	}
	svcs, err := c.ListIn(ctx, kube.ServiceGVK, ns, labelTag)
	if err != nil {
		return nil, err
	}
	type key struct{ tag, rev string }
	seen := map[key]bool{}
	var out []Tag
	for _, o := range append(hooks, svcs...) {
		if o.GetDeletionTimestamp() != nil {
			continue // removed a moment ago
		}
		l := o.GetLabels()
		rev, ok := l[ownership.LabelRevision]
		if !ok {
			continue // not a tag of any revision we can tell
		}
		k := key{l[labelTag], rev}
		if seen[k] {
			continue
		}
		seen[k] = true
		nss, err := NamespacesUsing(ctx, c, k.tag)
		if err != nil {
			return nil, err
		}
		out = append(out, Tag{Tag: k.tag, Revision: k.rev, Namespaces: nss})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Revision != out[j].Revision {
			return out[i].Revision < out[j].Revision
		}
		return out[i].Tag < out[j].Tag
	})
	return out, nil
}

// NamespacesUsing lists the namespaces labelled istio.io/rev=<tag>, sorted.
func NamespacesUsing(ctx context.Context, c *kube.Client, tag string) ([]string, error) {
	items, err := c.List(ctx, kube.NamespaceGVK, ownership.LabelRevision+"="+tag)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, it := range items {
		out = append(out, it.GetName())
	}
	sort.Strings(out)
	return out, nil
}
