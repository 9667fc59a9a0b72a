package link

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/istioctl-installer/istioctl/operator/kube"
)

// Survey is what one cluster's links are, read once: its link Secrets, what each one's
// credentials prove, what its istiods say they read, and what its istiods accept.
type Survey struct {
	// Namespace is the istio namespace: the only one istiod reads link Secrets from.
	Namespace string
	Links     []Link
	// Everywhere says the Secrets were looked for in every namespace (listing them
	// cluster-wide was allowed), so a link Secret in the wrong namespace is found too.
	Everywhere bool
	// Probes holds each link's probe, by index of Links.
	Probes []*Probe
	// Istiods are the istiods asked (IstiodsErr: they could not even be listed).
	Istiods    []Istiod
	IstiodsErr error
	// Allowed lists the auth methods the local istiods' PILOT_INSECURE_MULTICLUSTER_KUBECONFIG_OPTIONS
	// allow beyond the safe ones.
	Allowed []string
	// Self are this cluster's own names (its istiods' CLUSTER_ID).
	Self []Name
	// Access is what the reader role grants, asked of every link's identity; Bindings
	// name the ClusterRoleBindings that grant it.
	Access   []Access
	Bindings []string
}

// SurveyOptions say what to survey.
type SurveyOptions struct {
	Namespace string
	// Revision limits the istiods asked ("" for every one).
	Revision string
	// Access is what to ask of each link's identity (Reader.Access()), Bindings what grants
	// it (Reader.Bindings()).
	Access   []Access
	Bindings []string
}

// Take surveys the cluster c: it lists the link Secrets, probes each link (several at a
// time) and asks each running istiod for its view.
func Take(ctx context.Context, c *kube.Client, o SurveyOptions) (*Survey, error) {
	s := &Survey{Namespace: o.Namespace, Access: o.Access, Bindings: o.Bindings}
	var err error
	if s.Links, s.Everywhere, err = Secrets(ctx, c, o.Namespace); err != nil {
		return nil, fmt.Errorf("listing the link Secrets (label istio/multiCluster=true): %w", err)
	}
	pods, err := istiodPods(ctx, c, o.Namespace)
	if err != nil {
		return nil, err
	}
	s.Self = namesOf(pods, o.Namespace)
	s.Allowed = allowedOptions(pods)
	s.Probes = make([]*Probe, len(s.Links))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i := range s.Links {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			s.Probes[i] = s.Links[i].Probe(ctx, o.Access, o.Namespace)
		}()
	}
	s.Istiods, s.IstiodsErr = Istiods(ctx, c, o.Namespace, o.Revision)
	wg.Wait()
	return s, nil
}

// istiodPods lists the istiod pods in ns (none when the caller may not list pods there).
func istiodPods(ctx context.Context, c *kube.Client, ns string) ([]corev1.Pod, error) {
	items, err := c.ListIn(ctx, kube.PodGVK, ns, "app=istiod")
	if apierrors.IsForbidden(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for i := range items {
		var p corev1.Pod
		if err := fromUnstructured(&items[i], &p); err == nil && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// discoveryEnv is the value of env var name of a pod's discovery container ("" when unset;
// ok false without such a container).
func discoveryEnv(p *corev1.Pod, name string) (value string, ok bool) {
	for _, ctr := range p.Spec.Containers {
		if ctr.Name != "discovery" {
			continue
		}
		for _, e := range ctr.Env {
			if e.Name == name {
				return e.Value, true
			}
		}
		return "", true
	}
	return "", false
}

// namesOf are the distinct CLUSTER_IDs of the istiod pods.
func namesOf(pods []corev1.Pod, ns string) []Name {
	seen := map[string]bool{}
	var out []Name
	for i := range pods {
		id, ok := discoveryEnv(&pods[i], "CLUSTER_ID")
		if !ok {
			continue
		}
		if id == "" {
			id = DefaultClusterName
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, Name{Name: id, From: fmt.Sprintf("CLUSTER_ID of istiod pod %s/%s", ns, pods[i].Name)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// allowedOptions is the union of the istiod pods' PILOT_INSECURE_MULTICLUSTER_KUBECONFIG_OPTIONS.
func allowedOptions(pods []corev1.Pod) []string {
	seen := map[string]bool{}
	var out []string
	for i := range pods {
		v, _ := discoveryEnv(&pods[i], "PILOT_INSECURE_MULTICLUSTER_KUBECONFIG_OPTIONS")
		for _, o := range strings.Split(v, ",") {
			if o = strings.TrimSpace(o); o != "" && !seen[o] {
				seen[o] = true
				out = append(out, o)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Row is one line of upstream's remote-clusters table: a cluster an istiod reads (or, when
// no istiod could be asked, a link Secret), the Secret it comes from, its sync status, the
// istiod and its revision.
type Row struct {
	Name     string `json:"name"`
	Secret   string `json:"secret"`
	Status   string `json:"status"`
	Istiod   string `json:"istiod"`
	Revision string `json:"revision"`
	// Reason says why Status is unknown: istiod could not be asked, or none runs.
	Reason string `json:"reason,omitempty"`
}

// StatusUnknown is the status of a link no istiod could be asked about: never "synced".
const StatusUnknown = "unknown"

// StatusNotRegistered is the status of a link Secret in the istio namespace that an
// istiod which answered does not list (a duplicate cluster ID, a key equal to its own).
const StatusNotRegistered = "not-registered"

// Rows are the remote-clusters table: each answering istiod's clusters as it lists them,
// then the link Secrets of the istio namespace it does not list; for an istiod that did not
// answer, and when none runs, every link Secret of the istio namespace with status unknown.
func (s *Survey) Rows() []Row {
	var out []Row
	inNS := func(fn func(l *Link)) {
		for i := range s.Links {
			if s.Links[i].Namespace == s.Namespace {
				fn(&s.Links[i])
			}
		}
	}
	if len(s.Istiods) == 0 {
		reason := "no istiod runs in " + s.Namespace
		if s.IstiodsErr != nil {
			reason = "could not list the istiod pods: " + s.IstiodsErr.Error()
		}
		inNS(func(l *Link) {
			out = append(out, Row{Name: l.ClusterID, Secret: l.Secret(), Status: StatusUnknown, Istiod: "-", Revision: "-", Reason: reason})
		})
		return out
	}
	for _, v := range s.Istiods {
		if v.Err != nil {
			inNS(func(l *Link) {
				out = append(out, Row{Name: l.ClusterID, Secret: l.Secret(), Status: StatusUnknown, Istiod: v.Pod, Revision: v.Revision,
					Reason: "could not ask istiod: " + v.Err.Error()})
			})
			continue
		}
		listed := map[string]bool{}
		for _, cs := range v.Clusters {
			listed[cs.ID+" "+cs.SecretName] = true
			out = append(out, Row{Name: cs.ID, Secret: cs.SecretName, Status: cs.SyncStatus, Istiod: v.Pod, Revision: v.Revision})
		}
		inNS(func(l *Link) {
			if !listed[l.ClusterID+" "+l.Secret()] {
				out = append(out, Row{Name: l.ClusterID, Secret: l.Secret(), Status: StatusNotRegistered, Istiod: v.Pod, Revision: v.Revision,
					Reason: "istiod does not list this cluster from this Secret"})
			}
		})
	}
	return out
}

// Statuses are, for the link at index i, what each answering istiod says of it, by pod.
func (s *Survey) Statuses(i int) map[string]string {
	l := &s.Links[i]
	out := map[string]string{}
	for _, v := range s.Istiods {
		if v.Err != nil {
			continue
		}
		out[v.Pod] = StatusNotRegistered
		for _, cs := range v.Clusters {
			if cs.ID == l.ClusterID && cs.SecretName == l.Secret() {
				out[v.Pod] = cs.SyncStatus
			}
		}
	}
	return out
}
