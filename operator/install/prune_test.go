package install_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"sort"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/install"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
)

// The kinds of object the prune property test puts in the cluster, each with the verdict
// the prune must reach for it.
type pruneCase int

const (
	oursStale       pruneCase = iota // ours, this revision, no longer rendered: pruned
	oursRendered                     // ours, still rendered: kept
	otherRevision                    // our labels but another revision's: kept
	otherOwnerNS                     // another IstioOperator namespace's: kept
	otherOwnerName                   // another named install's (only when ours is named): kept
	lookalikeLabels                  // our labels but one of them wrong or missing: kept
	unlabelled                       // no ownership labels at all: kept
	helmOwned                        // installed by Helm (managed-by: Helm, helm's field manager): kept
	crd                              // a CRD with our labels, applied by us: kept (never pruned)
	otherKind                        // a kind install never prunes, or a lookalike group: kept
	controllerCopy                   // a controller's copy of our labels (owner reference): kept
	optedOut                         // ours, with the not-pruned label: kept
	neverApplied                     // our labels, written without server-side apply by us: kept
	numCases
)

var caseNames = [...]string{"oursStale", "oursRendered", "otherRevision", "otherOwnerNS", "otherOwnerName",
	"lookalikeLabels", "unlabelled", "helmOwned", "crd", "otherKind", "controllerCopy", "optedOut", "neverApplied"}

// TestPruneSelectionProperty generates random clusters (objects of every case above, with
// random names, namespaces, kinds, versions, extra labels, field managers, in random order,
// often colliding in name across kinds and namespaces) and random renders, and checks that
// the prune decision picks exactly the stale objects we own, leaves its input untouched,
// and does not depend on the order it sees them in.
//
// PRUNE_PROPERTY_RUNS (default 3000) and PRUNE_PROPERTY_SEED (default: fixed) widen it.
func TestPruneSelectionProperty(t *testing.T) {
	runs := 3000
	if s := os.Getenv("PRUNE_PROPERTY_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		runs = n
	}
	seed := uint64(20260110)
	if s := os.Getenv("PRUNE_PROPERTY_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = n
	}
	seen := make([]int, numCases)
	pruned := 0
	for i := 0; i < runs; i++ {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		w := newWorld(rng)
		for n := rng.IntN(60); n > 0; n-- {
			c := pruneCase(rng.IntN(int(numCases)))
			if c == otherOwnerName && w.owner.Name == "" {
				c = oursStale // an unnamed install's selector ignores the owner name
			}
			w.add(c)
			seen[c]++
		}
		before := deepCopies(w.live)
		renderedBefore := deepCopies(render.All(w.manifests))
		got, err := install.SelectStale(w.owner, w.manifests, w.live)
		if err != nil {
			t.Fatalf("run %d (seed %d): %v", i, seed, err)
		}
		if diff := w.check(got); diff != "" {
			t.Fatalf("run %d (seed %d, owner %+v): %s", i, seed, w.owner, diff)
		}
		pruned += len(got)
		if !sameObjects(before, w.live) || !sameObjects(renderedBefore, render.All(w.manifests)) {
			t.Fatalf("run %d (seed %d): the decision changed its input", i, seed)
		}
		// The order objects are listed in does not matter.
		shuffled := append([]*unstructured.Unstructured(nil), w.live...)
		rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		again, _ := install.SelectStale(w.owner, w.manifests, shuffled)
		if diff := w.check(again); diff != "" {
			t.Fatalf("run %d (seed %d), shuffled: %s", i, seed, diff)
		}
	}
	for c := pruneCase(0); c < numCases; c++ {
		if seen[c] < runs/5 {
			t.Errorf("case %s generated only %d times in %d runs", caseNames[c], seen[c], runs)
		}
	}
	t.Logf("%d runs, %d objects by case %v, %d pruned, all exactly the stale ones", runs, sum(seen), seen, pruned)
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

func sameObjects(a, b []*unstructured.Unstructured) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i].Object, b[i].Object) {
			return false
		}
	}
	return true
}

func deepCopies(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopy()
	}
	return out
}

// world is one generated cluster and render.
type world struct {
	rng       *rand.Rand
	owner     ownership.Owner
	live      []*unstructured.Unstructured
	manifests []render.Manifest
	// want is the identity of every object the prune must pick.
	want map[ref.Ref]bool
	// what says which case produced each live object, for failure messages.
	what map[ref.Ref]pruneCase
}

func newWorld(rng *rand.Rand) *world {
	w := &world{rng: rng, want: map[ref.Ref]bool{}, what: map[ref.Ref]pruneCase{}}
	w.owner = ownership.Owner{
		Name:      pick(rng, "", "", "installed-state", "prod"),
		Namespace: pick(rng, "istio-system", "istio-system", "mesh"),
		Revision:  pick(rng, "", "", "canary", "1-30"),
		Version:   "1.30.0",
	}
	// A render: one manifest per component present, starting with rendered objects that do
	// not exist yet (a fresh component) so the want set is not just the live one.
	for _, c := range component.All {
		if rng.IntN(3) == 0 {
			continue
		}
		m := render.Manifest{Instance: component.Instance{Component: c, Namespace: w.owner.Namespace}}
		for n := rng.IntN(3); n > 0; n-- {
			gvk := pickKind(rng, install.PruneKinds)
			m.Objects = append(m.Objects, object(gvk, w.namespaceFor(gvk), w.name(), nil))
		}
		w.manifests = append(w.manifests, m)
	}
	return w
}

func pick[T any](rng *rand.Rand, xs ...T) T { return xs[rng.IntN(len(xs))] }

func pickKind(rng *rand.Rand, kinds []schema.GroupVersionKind) schema.GroupVersionKind {
	return kinds[rng.IntN(len(kinds))]
}

// Names and namespaces come from small pools so objects collide across kinds, namespaces
// and cases: a decoy often has the name of a rendered or stale object.
func (w *world) name() string {
	return pick(w.rng, "istiod", "istio", "istio-ingressgateway", "istio-reader", "ztunnel", "x", "istio-cni-node")
}

var clusterScoped = map[string]bool{"ClusterRole": true, "ClusterRoleBinding": true, "MutatingWebhookConfiguration": true,
	"ValidatingWebhookConfiguration": true, "ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	"CustomResourceDefinition": true, "Namespace": true}

func (w *world) namespaceFor(gvk schema.GroupVersionKind) string {
	if clusterScoped[gvk.Kind] {
		return ""
	}
	return pick(w.rng, w.owner.Namespace, w.owner.Namespace, "istio-system", "kube-system", "default")
}

func object(gvk schema.GroupVersionKind, ns, name string, labels map[string]string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	o.SetNamespace(ns)
	o.SetName(name)
	if len(labels) > 0 {
		o.SetLabels(labels)
	}
	return o
}

func id(o *unstructured.Unstructured) ref.Ref { return ref.Of(o) }

func (w *world) rendered(o *unstructured.Unstructured) bool {
	for _, m := range w.manifests {
		for _, r := range m.Objects {
			if id(r) == id(o) {
				return true
			}
		}
	}
	return false
}

// ourLabels are the labels an install by owner puts on an object of a random component
// (of any istioctl version: the selector ignores it), with the charts' own labels, which
// include app.kubernetes.io/managed-by: Helm, and sometimes unrelated ones.
func (w *world) ourLabels(owner ownership.Owner) map[string]string {
	owner.Version = pick(w.rng, "1.30.0", "1.29.2", "")
	l := owner.Labels(component.All[w.rng.IntN(len(component.All))].Name)
	if w.rng.IntN(2) == 0 {
		l["app.kubernetes.io/managed-by"] = "Helm"
		l["helm.sh/chart"] = "istiod-1.30.0"
		l["app"] = "istiod"
	}
	if w.rng.IntN(4) == 0 {
		l["team"] = "mesh"
	}
	return l
}

var (
	applied = metav1.ManagedFieldsEntry{Manager: ownership.FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1"}
	others  = []metav1.ManagedFieldsEntry{
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate},
		{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate},
		{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"},
		{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate},
		// Our manager's name without server-side apply (a client-side write).
		{Manager: ownership.FieldManager, Operation: metav1.ManagedFieldsOperationUpdate},
	}
)

// managers sets the object's field managers: ours (server-side apply) when applied, plus
// random others, in random order.
func (w *world) managers(o *unstructured.Unstructured, ours bool, pool []metav1.ManagedFieldsEntry) {
	var mfs []metav1.ManagedFieldsEntry
	if ours {
		mfs = append(mfs, applied)
	}
	for n := w.rng.IntN(3); n > 0 && len(pool) > 0; n-- {
		mfs = append(mfs, pool[w.rng.IntN(len(pool))])
	}
	w.rng.Shuffle(len(mfs), func(a, b int) { mfs[a], mfs[b] = mfs[b], mfs[a] })
	o.SetManagedFields(mfs)
}

func (w *world) otherRev() string {
	for {
		r := pick(w.rng, "", "canary", "1-30", "1-29", "default")
		if r == "" {
			r = "default"
		}
		if r != w.owner.Rev() {
			return r
		}
	}
}

// add puts one object of case c into the cluster (a fresh identity) and records whether
// the prune must pick it.
func (w *world) add(c pruneCase) {
	for attempt := 0; attempt < 20; attempt++ {
		o := w.generate(c)
		if o == nil {
			return
		}
		if _, dup := w.what[id(o)]; dup {
			continue // the cluster holds one object per identity
		}
		if c == oursRendered && !w.rendered(o) {
			w.renderToo(o)
		}
		if c == oursStale && w.rendered(o) {
			continue
		}
		w.what[id(o)] = c
		w.live = append(w.live, o)
		if c == oursStale {
			w.want[id(o)] = true
		}
		return
	}
}

// renderToo adds o's identity to the render, under a random component and sometimes
// another version of its group (the prune matches group, kind, namespace and name).
func (w *world) renderToo(o *unstructured.Unstructured) {
	r := object(o.GroupVersionKind(), o.GetNamespace(), o.GetName(), nil)
	if o.GetKind() == "HorizontalPodAutoscaler" && w.rng.IntN(2) == 0 {
		r.SetAPIVersion("autoscaling/v1")
	}
	if len(w.manifests) == 0 {
		c := component.All[w.rng.IntN(len(component.All))]
		w.manifests = append(w.manifests, render.Manifest{Instance: component.Instance{Component: c}})
	}
	m := &w.manifests[w.rng.IntN(len(w.manifests))]
	m.Objects = append(m.Objects, r)
}

var (
	crdGVK     = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	otherKinds = []schema.GroupVersionKind{
		{Version: "v1", Kind: "Namespace"},
		{Version: "v1", Kind: "Pod"},
		{Version: "v1", Kind: "PersistentVolumeClaim"},
		{Group: "apps", Version: "v1", Kind: "StatefulSet"},
		{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
		{Group: "batch", Version: "v1", Kind: "Job"},
		{Group: "networking.istio.io", Version: "v1", Kind: "DestinationRule"},
		{Group: "security.istio.io", Version: "v1", Kind: "PeerAuthentication"},
		// Lookalikes: a prune kind's name in another group.
		{Group: "serving.knative.dev", Version: "v1", Kind: "Service"},
		{Group: "example.com", Version: "v1", Kind: "ConfigMap"},
		{Group: "extensions", Version: "v1beta1", Kind: "Deployment"},
		{Group: "networking.istio.io", Version: "v1", Kind: "ServiceEntry"},
	}
	helmManagers = []metav1.ManagedFieldsEntry{{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}}
	nonApplyManagers = []metav1.ManagedFieldsEntry{others[0], others[1], others[3], others[4], others[5]}
)

func (w *world) generate(c pruneCase) *unstructured.Unstructured {
	rng := w.rng
	gvk := pickKind(rng, install.PruneKinds)
	ns := w.namespaceFor(gvk)
	name := w.name()
	switch c {
	case oursStale, oursRendered:
		o := object(gvk, ns, name, w.ourLabels(w.owner))
		w.managers(o, true, others)
		return o
	case otherRevision:
		other := w.owner
		other.Revision = w.otherRev()
		o := object(gvk, ns, name, w.ourLabels(other))
		w.managers(o, true, others)
		return o
	case otherOwnerNS:
		other := w.owner
		other.Namespace = pick(rng, "istio-canary", "other", "")
		if other.Namespace == w.owner.Namespace {
			other.Namespace = "elsewhere"
		}
		l := w.ourLabels(other)
		if other.Namespace == "" || rng.IntN(4) == 0 {
			delete(l, ownership.LabelOwnerNamespace)
		}
		o := object(gvk, ns, name, l)
		w.managers(o, true, others)
		return o
	case otherOwnerName:
		other := w.owner
		other.Name = pick(rng, "staging", "installed-state-x", "other")
		l := w.ourLabels(other)
		if rng.IntN(3) == 0 {
			delete(l, ownership.LabelOwner) // an unnamed install's
		}
		o := object(gvk, ns, name, l)
		w.managers(o, true, others)
		return o
	case lookalikeLabels:
		l := w.ourLabels(w.owner)
		switch rng.IntN(7) {
		case 0:
			delete(l, ownership.LabelManaged)
		case 1:
			l[ownership.LabelManaged] = pick(rng, "Reconcile ", "reconcile", "false", "")
		case 2:
			l[ownership.LabelComponent] = pick(rng, "Kiali", "pilot", "base", "Gateways", "")
		case 3:
			delete(l, ownership.LabelComponent)
		case 4:
			delete(l, ownership.LabelRevision)
		case 5:
			l[ownership.LabelRevision] = w.owner.Rev() + "-x"
		case 6:
			delete(l, ownership.LabelOwnerNamespace)
		}
		o := object(gvk, ns, name, l)
		w.managers(o, rng.IntN(2) == 0, others)
		return o
	case unlabelled:
		var l map[string]string
		if rng.IntN(2) == 0 {
			l = map[string]string{"app": name, "istio.io/rev": w.owner.Rev()}
		}
		o := object(gvk, ns, name, l)
		w.managers(o, rng.IntN(2) == 0, others)
		return o
	case helmOwned:
		l := map[string]string{"app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "istiod-1.30.0"}
		// Istio's own Helm charts set some of the operator labels too; sometimes all.
		if rng.IntN(2) == 0 {
			for k, v := range w.ourLabels(w.owner) {
				if rng.IntN(3) > 0 {
					l[k] = v
				}
			}
		}
		o := object(gvk, ns, name, l)
		o.SetAnnotations(map[string]string{"meta.helm.sh/release-name": "istiod", "meta.helm.sh/release-namespace": w.owner.Namespace})
		w.managers(o, false, helmManagers)
		if len(o.GetManagedFields()) == 0 {
			o.SetManagedFields(helmManagers[:1])
		}
		return o
	case crd:
		o := object(crdGVK, "", pick(rng, "gateways", "virtualservices", "wasmplugins")+".networking.istio.io", w.ourLabels(w.owner))
		w.managers(o, true, others)
		return o
	case otherKind:
		k := pickKind(rng, otherKinds)
		o := object(k, w.namespaceFor(k), name, w.ourLabels(w.owner))
		w.managers(o, true, others)
		return o
	case controllerCopy:
		o := object(gvk, ns, name, w.ourLabels(w.owner))
		o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: name, UID: types.UID("uid-" + name)}})
		w.managers(o, rng.IntN(2) == 0, others)
		if len(o.GetManagedFields()) == 0 {
			o.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "endpointslice-controller", Operation: metav1.ManagedFieldsOperationUpdate}})
		}
		return o
	case optedOut:
		l := w.ourLabels(w.owner)
		l[ownership.LabelNotPruned] = pick(rng, "true", "")
		o := object(gvk, ns, name, l)
		w.managers(o, true, others)
		return o
	case neverApplied:
		o := object(gvk, ns, name, w.ourLabels(w.owner))
		w.managers(o, false, nonApplyManagers)
		return o
	}
	panic(fmt.Sprint("unknown case ", c))
}

// check compares the decision with the generated truth.
func (w *world) check(got []*unstructured.Unstructured) string {
	gotIDs := map[ref.Ref]bool{}
	var wrong []string
	for _, o := range got {
		k := id(o)
		if gotIDs[k] {
			wrong = append(wrong, "picked twice: "+k.String())
		}
		gotIDs[k] = true
		if !w.want[k] {
			c, known := w.what[k]
			desc := "not in the cluster"
			if known {
				desc = caseNames[c]
			}
			wrong = append(wrong, fmt.Sprintf("pruned %s (%s), labels %v", k, desc, o.GetLabels()))
		}
	}
	for k := range w.want {
		if !gotIDs[k] {
			wrong = append(wrong, "kept stale "+k.String())
		}
	}
	sort.Strings(wrong)
	if len(wrong) == 0 {
		return ""
	}
	return fmt.Sprint(wrong)
}
