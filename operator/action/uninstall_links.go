package action

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// RemoteLink is a link Secret in another cluster that points at the cluster being
// uninstalled: removed with it (uninstall --remote-contexts).
type RemoteLink struct {
	Context string `json:"context"`
	// Object is Secret/namespace/name; Keys the cluster IDs of it that are this cluster's.
	Object string   `json:"object"`
	Keys   []string `json:"keys"`
	// Whole says every key is this cluster's: the Secret goes, not just those keys.
	Whole bool `json:"whole"`

	client    *kube.Client
	namespace string
	name      string
}

// uninstallLinks is what an uninstall does to the links between this cluster and others.
type uninstallLinks struct {
	remote []RemoteLink
	// tokens are this cluster's token Secrets create-remote-secret --apply-to issued for
	// those clusters' links: revoked with them.
	tokens []*link.TokenSecret
	client *kube.Client
}

// planLinks finds, in each of RemoteContexts, the link Secrets whose cluster ID is this
// cluster's (the CLUSTER_ID of the istiod being removed, the spec's clusterName, or the
// kube-system UID create-remote-secret defaults to), and the tokens this cluster issued for
// their links; and says (warnings) what happens to this cluster's own link Secrets.
func (a *Uninstall) planLinks(ctx context.Context, client *kube.Client, p *UninstallPlan, specName string, events event.Sink) error {
	own, err := link.SecretsIn(ctx, client, p.Namespace)
	if err != nil {
		return err
	}
	for i := range own {
		s := &own[i]
		keys := keysOf(s)
		events.Emit(event.Event{Type: event.Warning, Object: ref.New("Secret", s.GetNamespace(), s.GetName()).String(),
			Message: fmt.Sprintf("stays: this cluster's link to %s (an istiod here reads that cluster with it); link Secrets are not part of an install: delete it with 'kubectl delete secret -n %s %s' once no istiod here needs it",
				strings.Join(keys, ", "), s.GetNamespace(), s.GetName())})
	}
	if len(a.RemoteContexts) == 0 {
		return nil
	}
	selfUID, err := link.ClusterUID(ctx, client)
	if err != nil {
		return err
	}
	ids := map[string]bool{selfUID: true}
	if specName != "" {
		ids[specName] = true
	}
	for _, id := range clusterIDs(p.targets) {
		ids[id] = true
	}
	p.links.client = client
	tokens, err := link.TokenSecrets(ctx, client, p.Namespace, ownership.ReaderServiceAccount)
	if err != nil {
		return err
	}
	for _, name := range a.RemoteContexts {
		rc, err := a.contextClient(ctx, name)
		if err != nil {
			return fmt.Errorf("--remote-contexts %s: %w", name, err)
		}
		uid, err := link.ClusterUID(ctx, rc)
		if err != nil {
			return fmt.Errorf("--remote-contexts %s: %w", name, err)
		}
		if uid == selfUID {
			return &UsageError{Err: fmt.Errorf("--remote-contexts %s is the cluster being uninstalled: name the other clusters", name)}
		}
		secrets, err := link.SecretsIn(ctx, rc, p.Namespace)
		if err != nil {
			return fmt.Errorf("--remote-contexts %s: %w", name, err)
		}
		for i := range secrets {
			s := &secrets[i]
			all := keysOf(s)
			var mine []string
			for _, k := range all {
				if ids[k] || (k == ownership.ConfigSecretKey && ids[s.GetAnnotations()[ownership.AnnotationCluster]]) {
					mine = append(mine, k)
				}
			}
			if len(mine) == 0 {
				continue
			}
			p.links.remote = append(p.links.remote, RemoteLink{Context: name, Object: ref.New("Secret", s.GetNamespace(), s.GetName()).String(),
				Keys: mine, Whole: len(mine) == len(all), client: rc, namespace: s.GetNamespace(), name: s.GetName()})
		}
		for _, t := range tokens {
			if t.ForCluster == uid {
				p.links.tokens = append(p.links.tokens, t)
			}
		}
	}
	for _, r := range p.links.remote {
		p.Remote = append(p.Remote, r)
		p.Targets = append(p.Targets, r.Object+" in context "+r.Context)
	}
	for _, t := range p.links.tokens {
		p.Targets = append(p.Targets, t.Describe())
	}
	return nil
}

func keysOf(s *unstructured.Unstructured) []string {
	data, _, _ := unstructured.NestedMap(s.Object, "data")
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// clusterIDs are the CLUSTER_IDs of the istiod Deployments among objs.
func clusterIDs(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		if id := link.OwnName(link.NameSources{Objects: []*unstructured.Unstructured{o}}); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// removeLinks removes the planned remote link Secrets (or their keys) and revokes the
// tokens this cluster issued for them, saying each as a pruned event.
func (a *Uninstall) removeLinks(ctx context.Context, l uninstallLinks, events event.Sink) error {
	status := func(where string) string {
		if a.DryRun {
			return "would be removed " + where
		}
		return "removed " + where
	}
	for _, r := range l.remote {
		if err := link.DeleteLink(ctx, r.client, r.namespace, r.name, r.Keys, r.Whole, a.DryRun); err != nil {
			return fmt.Errorf("context %s: %w", r.Context, err)
		}
		where := "from context " + r.Context
		if !r.Whole {
			where = fmt.Sprintf("(keys %s) from context %s", strings.Join(r.Keys, ", "), r.Context)
		}
		events.Emit(event.Event{Type: event.Pruned, Object: r.Object,
			ObjectChange: event.ObjectChange{Status: status(where), Action: event.ActionRemoved}})
	}
	for _, t := range l.tokens {
		if err := t.Delete(ctx, l.client, a.DryRun); err != nil {
			return err
		}
		events.Emit(event.Event{Type: event.Pruned, Object: t.Describe(),
			ObjectChange: event.ObjectChange{Status: status("(the token of a link removed above)"), Action: event.ActionRemoved}})
	}
	return nil
}
