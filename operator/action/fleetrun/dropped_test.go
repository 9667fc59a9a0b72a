package fleetrun

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/fleet"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/fakekube"
)

// The clusters of these tests, by identity (kube-system UID).
const (
	uid1, uid2, uid3, uidOther = "uid-1", "uid-2", "uid-3", "uid-other"
	istioNS                    = "istio-system"
)

var secretsGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

func kubeSystem(uid string) *unstructured.Unstructured {
	n := &unstructured.Unstructured{}
	n.SetGroupVersionKind(kube.NamespaceGVK)
	n.SetName("kube-system")
	n.SetUID(types.UID(uid))
	n.SetResourceVersion("1")
	return n
}

func testSecret(ns, name string, labels, ann map[string]string, managers ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	s := &unstructured.Unstructured{}
	s.SetGroupVersionKind(kube.SecretGVK)
	s.SetNamespace(ns)
	s.SetName(name)
	s.SetUID(types.UID(ns + "/" + name))
	s.SetResourceVersion("1")
	s.SetLabels(labels)
	s.SetAnnotations(ann)
	s.SetManagedFields(managers)
	return s
}

var applied = metav1.ManagedFieldsEntry{Manager: ownership.LinkFieldManager, Operation: metav1.ManagedFieldsOperationApply}

// fleetLinkOf is a link Secret fleet bed wrote into a cluster: from's credentials, as
// reached through context (uid "": as an older istioctl wrote it, with no identity).
func fleetLinkOf(from, context, uid string) *unstructured.Unstructured {
	labels := ownership.FleetLabels("mesh1", "bed")
	labels[ownership.LabelMultiCluster] = "true"
	ann := map[string]string{ownership.AnnotationCluster: from, ownership.AnnotationFleetFrom: context}
	if uid != "" {
		ann[ownership.AnnotationFleetFromUID] = uid
	}
	return testSecret(istioNS, ownership.RemoteSecretName(from), labels, ann, applied)
}

// tokenFor is a reader token Secret a cluster issued for the link into the cluster forUID.
func tokenFor(forUID string) *unstructured.Unstructured {
	s := testSecret(istioNS, "reader-token-for-"+forUID, map[string]string{ownership.LabelTokenFor: forUID},
		map[string]string{corev1.ServiceAccountNameKey: ownership.ReaderServiceAccount})
	s.Object["type"] = string(corev1.SecretTypeServiceAccountToken)
	return s
}

// rig is a fleet file's clusters (name -> context) over fake clusters by context; reach
// connects to a context's fake cluster and records each context it was asked for.
type rig struct {
	t        *testing.T
	fleet    *Fleet
	clusters map[string]*fakekube.Cluster
	reached  []string
}

func newRig(t *testing.T) *rig {
	return &rig{t: t, fleet: &Fleet{Config: &action.Config{Lock: &action.LockOptions{Skip: true}}}, clusters: map[string]*fakekube.Cluster{}}
}

// cluster adds a fake cluster of identity uid, reached through each of contexts.
func (r *rig) cluster(uid string, objs []*unstructured.Unstructured, contexts ...string) *fakekube.Cluster {
	c, err := fakekube.New(append([]*unstructured.Unstructured{kubeSystem(uid)}, objs...))
	if err != nil {
		r.t.Fatal(err)
	}
	for _, ctx := range contexts {
		r.clusters[ctx] = c
	}
	return c
}

func (r *rig) reach(ctx context.Context, m *Member) bool {
	r.reached = append(r.reached, m.Context)
	c := r.clusters[m.Context]
	if c == nil {
		m.Err = errors.New("no context " + m.Context)
		return false
	}
	return identify(ctx, m, c.Client)
}

// plan plans the links of the file's clusters (name, context pairs, in order), every
// cluster of the file reading every other.
func (r *rig) plan(file ...string) *Plan {
	ctx := context.Background()
	p := &Plan{Fleet: "bed", MeshID: "mesh1"}
	for i := 0; i < len(file); i += 2 {
		m := r.fleet.newMember(&fleet.Cluster{Name: file[i], Context: file[i+1]})
		m.Namespace = istioNS
		p.Members = append(p.Members, m)
		r.reach(ctx, m)
	}
	r.reached = nil
	desired := func(func(*fleet.Cluster) string) []fleet.Link {
		var out []fleet.Link
		for _, into := range p.Members {
			for _, from := range p.Members {
				if from != into {
					s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: istioNS, Name: ownership.RemoteSecretName(from.Name)}}
					out = append(out, fleet.Link{Into: into.cluster, From: from.cluster, Secret: s})
				}
			}
		}
		return out
	}
	links, err := r.fleet.planLinks(ctx, p, desired, r.reach)
	if err != nil {
		r.t.Fatal(err)
	}
	p.Links = links
	return p
}

// removals are the plan's removals as "into secret".
func removals(p *Plan) []string {
	var out []string
	for _, l := range p.Links {
		if l.Action == LinkRemove {
			out = append(out, l.Into+" "+l.Secret)
		}
	}
	sort.Strings(out)
	return out
}

func keptReasons(p *Plan) []string {
	var out []string
	for _, k := range p.Kept {
		out = append(out, k.Cluster+" "+string(k.Reason))
	}
	sort.Strings(out)
	return out
}

// TestLinkRecordsIdentity: the link a fleet run writes records the identity of the cluster
// whose credentials it holds, and the context only as a hint a kept link need not carry.
func TestLinkRecordsIdentity(t *testing.T) {
	r := newRig(t)
	r.cluster(uid1, nil, "ctx-1")
	r.cluster(uid2, nil, "ctx-2")
	p := r.plan("cluster-1", "ctx-1", "cluster-2", "ctx-2")
	from, into := p.Members[1], p.Members[0]
	l := &LinkPlan{Into: into.Name, From: from.Name, link: &fleet.Link{Type: "remote", Secret: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: istioNS}}}}
	rs := r.fleet.remoteSecret(p, l, from, into)
	if got := rs.Annotations[ownership.AnnotationFleetFromUID]; got != uid2 {
		t.Errorf("the link records identity %q, want %q (cluster-2's kube-system UID)", got, uid2)
	}
	if _, ok := rs.Annotations[ownership.AnnotationFleetFrom]; ok {
		t.Errorf("the context is among the annotations a kept link must carry: %v", rs.Annotations)
	}
	if got := rs.Hints[ownership.AnnotationFleetFrom]; got != "ctx-2" {
		t.Errorf("the link's context hint is %q, want ctx-2", got)
	}
	if rs.ApplyTo != "ctx-1" || !rs.Keep {
		t.Errorf("the link is applied to %q (keep %v), want ctx-1, kept while it works", rs.ApplyTo, rs.Keep)
	}
}

// TestNoDropOnContextName: links whose context the file does not name, but whose recorded
// identity is a cluster of the file (two contexts for one cluster, a renamed context),
// reach nothing and remove nothing; a link that records no identity is never proof; a
// context that reaches another cluster than the recorded one proves nothing.
func TestNoDropOnContextName(t *testing.T) {
	for _, tc := range []struct {
		name string
		// in1 are the links cluster-1 holds; others adds clusters (by context).
		in1     []*unstructured.Unstructured
		others  map[string]string
		reached []string
		kept    []string
	}{
		{name: "two contexts for one cluster", in1: []*unstructured.Unstructured{fleetLinkOf("cluster-2", "ctx-2-alias", uid2)},
			others: map[string]string{"ctx-2-alias": uid2}, kept: []string{"cluster-2 same-cluster"}},
		{name: "a renamed context", in1: []*unstructured.Unstructured{fleetLinkOf("cluster-2", "old-name", uid2)},
			kept: []string{"cluster-2 same-cluster"}},
		{name: "an older link without identity", in1: []*unstructured.Unstructured{fleetLinkOf("cluster-2", "old-name", "")},
			others: map[string]string{"old-name": uid2}, kept: []string{"cluster-2 no-identity"}},
		{name: "a context re-pointed at another cluster", in1: []*unstructured.Unstructured{fleetLinkOf("cluster-9", "ctx-9", "uid-9")},
			others: map[string]string{"ctx-9": uidOther}, reached: []string{"ctx-9"}, kept: []string{"cluster-9 unproven"}},
		{name: "a context of the file that reaches another cluster now", in1: []*unstructured.Unstructured{fleetLinkOf("cluster-9", "ctx-2", "uid-9")},
			kept: []string{"cluster-9 unproven"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			c1 := r.cluster(uid1, append(tc.in1, tokenFor(uid2)), "ctx-1")
			c2 := r.cluster(uid2, []*unstructured.Unstructured{fleetLinkOf("cluster-1", "ctx-1", uid1), tokenFor(uid1)}, "ctx-2")
			for ctx, uid := range tc.others {
				if uid == uid2 {
					r.clusters[ctx] = c2
					continue
				}
				r.cluster(uid, []*unstructured.Unstructured{fleetLinkOf("cluster-1", "ctx-1", uid1)}, ctx)
			}
			p := r.plan("cluster-1", "ctx-1", "cluster-2", "ctx-2")
			if len(p.dropped) > 0 {
				t.Errorf("%d dropped clusters, want none", len(p.dropped))
			}
			if !slices.Equal(r.reached, tc.reached) {
				t.Errorf("contexts reached for dropped clusters %v, want %v", r.reached, tc.reached)
			}
			if got := keptReasons(p); !slices.Equal(got, tc.kept) {
				t.Errorf("kept %v, want %v", got, tc.kept)
			}
			// Carry out the plan's removals (of links the file no longer implies, in its own
			// clusters): nothing else is deleted, and no token revoked.
			var want []string
			for _, l := range p.Links {
				if l.Action == LinkRemove {
					if l.holder != nil {
						t.Errorf("a removal in cluster %s, which the file does not name", l.Into)
					}
					want = append(want, l.Into+" "+l.Secret)
					_, _ = r.fleet.removeLink(context.Background(), p, l, p.holderOf(l), nil)
				}
			}
			var deleted []string
			for name, c := range map[string]*fakekube.Cluster{"cluster-1": c1, "cluster-2": c2} {
				for _, d := range c.Deletes() {
					deleted = append(deleted, name+" "+d.Namespace+"/"+d.Name)
				}
			}
			for _, c := range r.clusters {
				if c != c1 && c != c2 && len(c.Deletes()) > 0 {
					t.Errorf("deleted %v in a cluster the file does not name", c.Deletes())
				}
			}
			sort.Strings(deleted)
			if !slices.Equal(deleted, want) {
				t.Errorf("deleted %v, want only the removals %v", deleted, want)
			}
			if !tokenThere(c1, uid2) || !tokenThere(c2, uid1) {
				t.Error("a token was revoked")
			}
		})
	}
}

// TestDroppedCluster: a cluster the file no longer names, found through the recorded
// context with the recorded identity (no cluster of the file has it), loses only the link
// Secrets istioctl wrote for this fleet in its istio namespace, each deleted as read; a
// Secret with only the fleet's label in another namespace, and one in the istio namespace
// another manager wrote, stay (the latter named by a kept event). The tokens go with their
// links, found by identity.
func TestDroppedCluster(t *testing.T) {
	r := newRig(t)
	fleetOnly := testSecret("default", "app-config", ownership.FleetLabels("mesh1", "bed"), nil, applied)
	byHand := fleetLinkOf("cluster-9", "ctx-9", "uid-9")
	byHand.SetName("hand-made")
	byHand.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate}})
	c1 := r.cluster(uid1, []*unstructured.Unstructured{fleetLinkOf("cluster-2", "ctx-2", uid2), fleetLinkOf("cluster-3", "ctx-3", uid3), tokenFor(uid2), tokenFor(uid3)}, "ctx-1")
	c2 := r.cluster(uid2, []*unstructured.Unstructured{fleetLinkOf("cluster-1", "ctx-1", uid1), fleetLinkOf("cluster-3", "ctx-3", uid3),
		fleetOnly, byHand, tokenFor(uid1)}, "ctx-2")
	c3 := r.cluster(uid3, []*unstructured.Unstructured{fleetLinkOf("cluster-1", "ctx-1", uid1), tokenFor(uid1), tokenFor(uid2)}, "ctx-3")

	p := r.plan("cluster-1", "ctx-1", "cluster-3", "ctx-3")
	want := []string{"cluster-1 istio-system/istio-remote-secret-cluster-2", "cluster-2 istio-system/istio-remote-secret-cluster-1", "cluster-2 istio-system/istio-remote-secret-cluster-3"}
	if got := removals(p); !slices.Equal(got, want) {
		t.Fatalf("removals %v, want %v", got, want)
	}
	if !slices.Equal(r.reached, []string{"ctx-2"}) {
		t.Errorf("contexts reached for dropped clusters %v, want ctx-2", r.reached)
	}
	if got := keptReasons(p); !slices.Equal(got, []string{"cluster-2 not-a-link"}) || p.Kept[0].Object != "Secret/istio-system/hand-made" {
		t.Errorf("kept %+v, want cluster-2's hand-made Secret, not a link", p.Kept)
	}

	rec := &event.Recorder{}
	for _, l := range p.Links {
		if l.Action != LinkRemove {
			continue
		}
		outcome, err := r.fleet.removeLink(context.Background(), p, l, p.holderOf(l), rec)
		if outcome != event.LinkRemoved || err != nil {
			t.Errorf("removing %s in %s: %s %v", l.Secret, l.Into, outcome, err)
		}
	}
	var deleted []string
	for name, c := range map[string]*fakekube.Cluster{"cluster-1": c1, "cluster-2": c2, "cluster-3": c3} {
		for _, d := range c.Deletes() {
			deleted = append(deleted, name+" "+d.Namespace+"/"+d.Name)
			if p := d.Options.Preconditions; p == nil || p.UID == nil || p.ResourceVersion == nil {
				t.Errorf("%s: delete of %s/%s without the read's UID and resourceVersion", name, d.Namespace, d.Name)
			}
		}
	}
	sort.Strings(deleted)
	if !slices.Equal(deleted, want) {
		t.Errorf("deleted %v, want %v", deleted, want)
	}
	for _, s := range []*unstructured.Unstructured{fleetOnly, byHand} {
		if !c2.Exists(secretsGVR, s.GetNamespace(), s.GetName()) {
			t.Errorf("cluster-2's %s/%s was deleted", s.GetNamespace(), s.GetName())
		}
	}
	// The tokens: cluster-2's for cluster-1 (its link into cluster-1 went), cluster-1's and
	// cluster-3's for cluster-2; cluster-3's for cluster-1 stays (that link stays).
	gone := map[*fakekube.Cluster][]string{c1: {uid2}, c2: {uid1}, c3: {uid2}}
	stays := map[*fakekube.Cluster][]string{c1: {uid3}, c3: {uid1}}
	for c, uids := range gone {
		for _, u := range uids {
			if tokenThere(c, u) {
				t.Errorf("the token for %s was not revoked", u)
			}
		}
	}
	for c, uids := range stays {
		for _, u := range uids {
			if !tokenThere(c, u) {
				t.Errorf("the token for %s was revoked", u)
			}
		}
	}
}

func tokenThere(c *fakekube.Cluster, forUID string) bool {
	_, err := c.Dynamic.Resource(secretsGVR).Namespace(istioNS).Get(context.Background(), "reader-token-for-"+forUID, metav1.GetOptions{})
	return err == nil
}

// TestDroppedUnproven: with a cluster of the file not identified, no cluster counts as
// dropped; a dropped cluster's link removal that changed since the plan is kept.
func TestDroppedUnproven(t *testing.T) {
	r := newRig(t)
	r.cluster(uid1, []*unstructured.Unstructured{fleetLinkOf("cluster-2", "ctx-2", uid2)}, "ctx-1")
	r.cluster(uid2, []*unstructured.Unstructured{fleetLinkOf("cluster-1", "ctx-1", uid1)}, "ctx-2")
	p := r.plan("cluster-1", "ctx-1", "cluster-3", "ctx-3") // ctx-3 answers not
	if len(r.reached) > 0 || len(p.dropped) > 0 {
		t.Errorf("reached %v for dropped clusters, want none while cluster-3 is not identified", r.reached)
	}
	if got := keptReasons(p); !slices.Equal(got, []string{"cluster-2 unproven"}) || !strings.Contains(p.Kept[0].Message, "cluster-3") {
		t.Errorf("kept %+v, want cluster-2 unproven, naming cluster-3", p.Kept)
	}
}

// TestRemovalJudgedAgain: a link Secret that another manager took over after the plan read
// it is kept, and a kept event names it.
func TestRemovalJudgedAgain(t *testing.T) {
	r := newRig(t)
	c1 := r.cluster(uid1, []*unstructured.Unstructured{fleetLinkOf("cluster-2", "ctx-2", uid2)}, "ctx-1")
	p := r.plan("cluster-1", "ctx-1")
	var l *LinkPlan
	for _, x := range p.Links {
		if x.Action == LinkRemove && x.holder == nil {
			l = x
		}
	}
	if l == nil {
		t.Fatal("no removal planned")
	}
	// Taken over after the plan: another resourceVersion, no apply of ours.
	live, err := c1.Meta.Resource(secretsGVR).Namespace(istioNS).Get(context.Background(), l.obj.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.ResourceVersion = "2"
	live.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}}
	if err := c1.Meta.Tracker().Update(secretsGVR, live, istioNS); err != nil {
		t.Fatal(err)
	}
	rec := &event.Recorder{}
	outcome, err := r.fleet.removeLink(context.Background(), p, l, p.holderOf(l), rec)
	if err != nil || outcome != event.LinkUnchanged {
		t.Fatalf("removal: %s %v, want unchanged", outcome, err)
	}
	if !c1.Exists(secretsGVR, istioNS, l.obj.GetName()) {
		t.Error("the link taken over was deleted")
	}
	if k := rec.Of(event.Kept); len(k) != 1 || k[0].KeptReason != event.KeptNotALink || k[0].Object != "Secret/istio-system/istio-remote-secret-cluster-2" {
		t.Errorf("kept events %+v, want one naming the Secret, not a link", k)
	}
}
