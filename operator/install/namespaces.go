package install

import (
	"context"
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/render"
)

// ensureNamespaces creates the namespaces the components install into, if missing, and
// gives each the labels and annotations NamespaceMeta names (the istio namespace's network
// label, a remote's controlPlaneClusters annotation) before anything is applied into it.
// They are reported as applied events, not counted among the run's changes: the plan
// leaves them out too.
func (in *pass) ensureNamespaces(ctx context.Context, manifests []render.Manifest) error {
	seen := map[string]bool{}
	var names []string
	for _, m := range manifests {
		for _, ns := range append([]string{m.Instance.Namespace}, namespacesOf(m.Objects)...) {
			if ns != "" && !seen[ns] {
				seen[ns] = true
				names = append(names, ns)
			}
		}
	}
	sort.Strings(names)
	for _, ns := range names {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("v1")
		obj.SetKind("Namespace")
		obj.SetName(ns)
		live, err := in.Client.Get(ctx, obj)
		if err != nil {
			return err
		}
		if live != nil && live.GetDeletionTimestamp() != nil && !in.Opts.DryRun {
			// Nothing can be created in a namespace being deleted (an uninstall or a test's
			// cleanup a moment ago): wait until it is gone, then create it again.
			in.events.Emit(event.Event{Type: event.Waiting, Object: ref.Of(obj).String(), Message: "being deleted; waiting until it is gone to create it again"})
			if live, err = in.waitNamespaceGone(ctx, obj); err != nil {
				return err
			}
		}
		want := in.NamespaceMeta[ns]
		if len(want.Labels) > 0 {
			obj.SetLabels(want.Labels)
		}
		if len(want.Annotations) > 0 {
			obj.SetAnnotations(want.Annotations)
		}
		action := Created
		if live != nil {
			// An existing namespace (made for cacerts, say) gets what the install sets on
			// it, as upstream only does for one it creates; one that has it is not written.
			if has(live.GetLabels(), want.Labels) && has(live.GetAnnotations(), want.Annotations) {
				continue
			}
			action = Configured
		}
		if _, err := in.Client.Apply(ctx, obj, kube.ApplyOptions{DryRun: in.Opts.DryRun}); err != nil {
			return fmt.Errorf("%s namespace %s: %w", map[Action]string{Created: "creating", Configured: "labelling"}[action], ns, err)
		}
		c := Change{Object: ref.Of(obj).String(), Action: action, DryRun: in.Opts.DryRun}
		if in.Opts.DryRun && action == Created {
			if in.missingNS == nil {
				in.missingNS = map[string]bool{}
			}
			in.missingNS[ns] = true
		}
		in.events.Emit(c.Event(event.Event{}))
	}
	return nil
}

// waitNamespaceGone re-reads a terminating namespace until it is gone (nil) or the run ends.
// A plain re-read: a rare case, and the namespace controller takes seconds anyway.
func (in *Installer) waitNamespaceGone(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("namespace %s is still being deleted: %w", obj.GetName(), ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
		live, err := in.Client.Get(ctx, obj)
		if err != nil || live == nil || live.GetDeletionTimestamp() == nil {
			return live, err
		}
	}
}

// NamespaceMeta is what an install sets on a namespace, created or not.
type NamespaceMeta struct {
	Labels, Annotations map[string]string
}

// has says every key of want is in got with its value.
func has(got, want map[string]string) bool {
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			return false
		}
	}
	return true
}

func namespacesOf(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		if o.GetNamespace() != "" {
			out = append(out, o.GetNamespace())
		}
	}
	return out
}
