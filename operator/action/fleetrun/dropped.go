package fleetrun

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/fleet"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// A cluster the fleet file no longer names is found through the links of this fleet in
// the file's clusters: each records the cluster whose credentials it holds by its identity
// (its kube-system namespace's UID) and the kubeconfig context it was reached through. A
// context name is one kubeconfig's word (another operator's, a renamed one, two for one
// cluster), so it only says where to look: the cluster reached there is a dropped one only
// when its identity is the recorded one and no cluster of the file has it. Anything else
// is kept, by a KeptLink that says why.

// KeptLink is what a fleet run leaves that a context name or a label alone would have had
// it delete: the links in a cluster it cannot prove the file dropped (Object ""), or a
// Secret with the fleet's label that is no link istioctl wrote.
type KeptLink struct {
	// Cluster is where they are: a cluster of the file, or the name links record.
	Cluster, Object string
	Reason          event.KeptReason
	// Message says why, and what to do.
	Message string
}

// linkRecord is what a link Secret of this fleet in a cluster of the file records of the
// cluster whose credentials it holds.
type linkRecord struct {
	// In is the cluster holding it; Secret names it.
	In, Secret string
	// Cluster, Context and UID are its annotations: the name it gives the cluster, the
	// context it was reached through, its identity ("" when an older istioctl wrote it).
	Cluster, Context, UID string
}

func recordOf(in string, s *unstructured.Unstructured) linkRecord {
	ann := s.GetAnnotations()
	return linkRecord{In: in, Secret: ref.Of(s).String(), Cluster: ann[ownership.AnnotationCluster],
		Context: ann[ownership.AnnotationFleetFrom], UID: ann[ownership.AnnotationFleetFromUID]}
}

// candidate is a cluster the file may have dropped: the identity links record that no
// cluster of the file has, a name for it, and the contexts to look for it through.
type candidate struct {
	UID, Name string
	Contexts  []string
}

// fileClusters is what judge knows of the file's clusters: each context's cluster identity
// ("" when it could not be read), each identity's cluster name, and those not identified.
type fileClusters struct {
	contexts     map[string]string
	names        map[string]string
	unidentified []string
}

func (p *Plan) identities() fileClusters {
	out := fileClusters{contexts: map[string]string{}, names: map[string]string{}}
	for _, m := range p.Members {
		out.contexts[m.Context] = m.uid
		if m.uid == "" {
			out.unidentified = append(out.unidentified, m.Name)
			continue
		}
		out.names[m.uid] = m.Name
	}
	return out
}

// judge sorts what the links record: a candidate for each identity no cluster of the file
// has, to be looked for through the contexts the file does not name (one the file names
// reaches a cluster of the file: the recorded one is not there); a KeptLink for each record
// that a context name alone would have taken for a dropped cluster and that proves none.
// ns is where a dropped cluster's links are, for the commands a KeptLink gives.
func judge(records []linkRecord, ms fileClusters, fleetName, ns string) ([]candidate, []KeptLink) {
	byUID := map[string]*candidate{}
	kept := map[string]KeptLink{}
	keep := func(k KeptLink) {
		if _, ok := kept[k.Cluster+"\x00"+k.Message]; !ok {
			kept[k.Cluster+"\x00"+k.Message] = k
		}
	}
	byHand := fmt.Sprintf("if that cluster did leave the fleet, delete its links there yourself: kubectl --context <its context> -n %s delete secret -l %s,%s=true",
		ns, ownership.FleetSelector(fleetName), ownership.LabelMultiCluster)
	for _, r := range records {
		_, named := ms.contexts[r.Context]
		name := r.Cluster
		if name == "" {
			name = "context " + r.Context
		}
		switch {
		case r.Context == "":
			// A link of this fleet that names no context: no cluster to look for.
		case r.UID == "":
			if !named {
				keep(KeptLink{Cluster: name, Reason: event.KeptNoIdentity, Message: fmt.Sprintf(
					"%s in cluster %s names context %s, which the fleet file does not, and no cluster identity (an older istioctl wrote it): nothing is deleted and no token revoked through a context name; %s",
					r.Secret, r.In, r.Context, byHand)})
			}
		case ms.names[r.UID] != "":
			if !named {
				keep(KeptLink{Cluster: ms.names[r.UID], Reason: event.KeptSameCluster, Message: fmt.Sprintf(
					"%s in cluster %s names context %s, which the fleet file does not; the cluster it records (kube-system UID %s) is %s: not a dropped cluster",
					r.Secret, r.In, r.Context, r.UID, ms.names[r.UID])})
			}
		case len(ms.unidentified) > 0:
			keep(KeptLink{Cluster: name, Reason: event.KeptUnproven, Message: fmt.Sprintf(
				"the fleet file's %s could not be identified, so whether the cluster of kube-system UID %s (context %s) is one of them cannot be told: nothing there is deleted; run again once every cluster answers",
				strings.Join(ms.unidentified, ", "), r.UID, r.Context)})
		default:
			c := byUID[r.UID]
			if c == nil {
				c = &candidate{UID: r.UID, Name: name}
				byUID[r.UID] = c
			}
			if named {
				keep(KeptLink{Cluster: name, Reason: event.KeptUnproven, Message: fmt.Sprintf(
					"%s in cluster %s records kube-system UID %s reached through context %s, which now reaches %s (UID %s): a re-pointed context; nothing is deleted and no token revoked through it; %s",
					r.Secret, r.In, r.UID, r.Context, clusterWith(ms, ms.contexts[r.Context]), ms.contexts[r.Context], byHand)})
			} else if !slices.Contains(c.Contexts, r.Context) {
				c.Contexts = append(c.Contexts, r.Context)
			}
		}
	}
	var out []candidate
	for _, uid := range slices.Sorted(maps.Keys(byUID)) {
		c := byUID[uid]
		if len(c.Contexts) > 0 {
			slices.Sort(c.Contexts)
			out = append(out, *c)
		}
	}
	var keeps []KeptLink
	for _, k := range slices.Sorted(maps.Keys(kept)) {
		keeps = append(keeps, kept[k])
	}
	return out, keeps
}

func clusterWith(ms fileClusters, uid string) string {
	if n := ms.names[uid]; n != "" {
		return "cluster " + n
	}
	return "a cluster of the file"
}

// planDropped adds, for each cluster this fleet's links record that the file no longer
// names, the removal of this fleet's links in it, once it is found with the identity they
// record; what is not proven is kept (Plan.Kept).
func (a *Fleet) planDropped(ctx context.Context, p *Plan, records []linkRecord, reach func(context.Context, *Member) bool) []*LinkPlan {
	ns := droppedNamespace(p.f)
	cands, kept := judge(records, p.identities(), p.Fleet, ns)
	p.Kept = append(p.Kept, kept...)
	var out []*LinkPlan
	for _, c := range cands {
		out = append(out, a.planCandidate(ctx, p, c, ns, reach)...)
	}
	return out
}

// planCandidate looks for a cluster the file may have dropped through each context its
// links name: the first that reaches a cluster of the recorded identity is a dropped member
// (installed by nothing: its control plane stays), whose link Secrets of this fleet in its
// istio namespace are removed. One that reaches another cluster proves nothing; when none
// answers, the removal is left out with their errors.
func (a *Fleet) planCandidate(ctx context.Context, p *Plan, c candidate, ns string, reach func(context.Context, *Member) bool) []*LinkPlan {
	var unreached *Member
	for _, kctx := range c.Contexts {
		m := a.newMember(&fleet.Cluster{Name: c.Name, Context: kctx})
		m.Role = "dropped"
		if !reach(ctx, m) {
			if unreached == nil {
				unreached = m
			}
			continue
		}
		if m.uid != c.UID {
			p.Kept = append(p.Kept, KeptLink{Cluster: c.Name, Reason: event.KeptUnproven, Message: fmt.Sprintf(
				"context %s reaches a cluster of kube-system UID %s, not %s, the one this fleet's links record for %s: a renamed or re-pointed context; nothing there is deleted and no token revoked",
				kctx, m.uid, c.UID, c.Name)})
			continue
		}
		p.dropped = append(p.dropped, m)
		secrets, err := m.client.ListIn(ctx, kube.SecretGVK, ns, ownership.FleetSelector(p.Fleet))
		if err != nil {
			m.client, m.Err = nil, fmt.Errorf("listing its link Secrets: %w", err)
			return []*LinkPlan{{Into: c.Name, Secret: "the link Secrets of fleet " + p.Fleet, Action: LinkRemove, holder: m}}
		}
		byName := map[string]*unstructured.Unstructured{}
		for i := range secrets {
			byName[secrets[i].GetName()] = &secrets[i]
		}
		return p.removals(c.Name, m, byName)
	}
	if unreached == nil {
		return nil
	}
	p.dropped = append(p.dropped, unreached)
	return []*LinkPlan{{Into: c.Name, Secret: "the link Secrets of fleet " + p.Fleet, Action: LinkRemove, holder: unreached}}
}

// droppedNamespace is where a cluster the file no longer names holds its links: the istio
// namespace of the file's shared spec (no overlay of its own is left to say another).
func droppedNamespace(f *fleet.Fleet) string {
	if f == nil || f.Shared == nil {
		return action.DefaultIstioNamespace
	}
	res, err := spec.Resolve(spec.Options{Docs: []spec.Doc{*f.Shared}})
	if err != nil || res == nil {
		return action.DefaultIstioNamespace
	}
	return fleet.Namespace(res)
}

// identify reads the identity of the cluster client reaches (link.ClusterUID), the one a
// fleet's links record and judge compares; false (with m's Err) when it cannot be read.
func identify(ctx context.Context, m *Member, client *kube.Client) bool {
	uid, err := link.ClusterUID(ctx, client)
	if err != nil {
		m.Err = fmt.Errorf("cannot read its identity (the kube-system namespace's UID) through context %s: %w", m.Context, err)
		return false
	}
	m.client, m.cfg, m.uid = client, m.cfg.Reached(client), uid
	return true
}
