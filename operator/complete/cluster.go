package complete

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/istioctl-installer/istioctl/operator/history"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kubeflags"
	"github.com/istioctl-installer/istioctl/operator/revision"
	"github.com/istioctl-installer/istioctl/operator/tag"
)

// Timeout bounds every cluster question of one completion.
const Timeout = 500 * time.Millisecond

// ask runs q with a client of the flags' cluster, both bounded by Timeout; nil when there is
// no cluster to ask or it does not answer in time.
func ask[T any](ctx context.Context, f *kubeflags.Flags, q func(context.Context, *kube.Client) (T, error)) T {
	var zero T
	// client-go reports some failures through klog (discovery's "couldn't get current server
	// API group list"); a completion prints nothing but candidates, and it is the process's
	// last act.
	klog.SetLogger(logr.Discard())
	cfg, err := f.RESTConfig()
	if err != nil {
		return zero
	}
	cfg.Timeout = Timeout
	c, err := kube.NewClientForConfig(cfg)
	if err != nil {
		return zero
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	out, err := q(ctx, c)
	if err != nil {
		return zero
	}
	return out
}

// Revisions lists the control plane revisions in the cluster (its istiod Deployments').
func Revisions(ctx context.Context, f *kubeflags.Flags) []string {
	return ask(ctx, f, func(ctx context.Context, c *kube.Client) ([]string, error) {
		cps, err := revision.ControlPlanes(ctx, c, "")
		seen := map[string]bool{}
		var out []string
		for _, cp := range cps {
			if !seen[cp.Revision] {
				seen[cp.Revision] = true
				out = append(out, cp.Revision)
			}
		}
		sort.Strings(out)
		return out, err
	})
}

// Tags lists the revision tags served from istioNamespace, each with the revision it points
// at as its description ("prod\tcanary", cobra's candidate form).
func Tags(ctx context.Context, f *kubeflags.Flags, istioNamespace string) []string {
	return ask(ctx, f, func(ctx context.Context, c *kube.Client) ([]string, error) {
		tags, err := tag.List(ctx, c, istioNamespace)
		var out []string
		for _, t := range tags {
			out = append(out, t.Tag+"\t-> "+t.Revision)
		}
		return out, err
	})
}

// Records lists the install record numbers of revision rev ("" for the default one) in
// istioNamespace, newest first, each described as 'istioctl history' shows it.
func Records(ctx context.Context, f *kubeflags.Flags, istioNamespace, rev string) []string {
	return ask(ctx, f, func(ctx context.Context, c *kube.Client) ([]string, error) {
		store := &history.Store{Client: c, Namespace: istioNamespace}
		records, err := store.List(ctx, history.Rev(rev))
		var out []string
		for i := len(records) - 1; i >= 0; i-- {
			r := records[i]
			desc := fmt.Sprintf("%s %s", r.Time.Local().Format(time.DateTime), r.Outcome)
			if r.Profile != "" {
				desc += ", profile " + r.Profile
			}
			out = append(out, strconv.Itoa(r.Number)+"\t"+desc)
		}
		return out, err
	})
}

var nsGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}

// Namespaces lists the cluster's namespaces.
func Namespaces(ctx context.Context, f *kubeflags.Flags) []string {
	return ask(ctx, f, func(ctx context.Context, c *kube.Client) ([]string, error) {
		items, err := c.List(ctx, nsGVK, "")
		var out []string
		for _, it := range items {
			out = append(out, it.GetName())
		}
		sort.Strings(out)
		return out, err
	})
}

// Contexts, Clusters and Users list the kubeconfig's entries, sorted.
func Contexts(f *kubeflags.Flags) []string { return f.Contexts() }

// Clusters lists the kubeconfig's cluster names.
func Clusters(f *kubeflags.Flags) []string { return kubeconfigNames(f, "cluster") }

// Users lists the kubeconfig's user names.
func Users(f *kubeflags.Flags) []string { return kubeconfigNames(f, "user") }

func kubeconfigNames(f *kubeflags.Flags, what string) []string {
	raw, err := f.Loader().RawConfig()
	if err != nil {
		return nil
	}
	var out []string
	switch what {
	case "cluster":
		for n := range raw.Clusters {
			out = append(out, n)
		}
	case "user":
		for n := range raw.AuthInfos {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
