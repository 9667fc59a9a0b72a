// Package ownership is the one home of an install's identity: the labels istioctl puts on
// what it applies (as upstream names them), its field manager, who owns an object, the
// selectors that find an install's objects, the default revision and the namespaces an
// install names. It reads no cluster.
package ownership

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/kube"
)

// The ownership labels, as upstream sets them.
const (
	LabelManaged        = "operator.istio.io/managed"
	LabelVersion        = "operator.istio.io/version"
	LabelComponent      = "operator.istio.io/component"
	LabelOwner          = "install.operator.istio.io/owning-resource"
	LabelOwnerNamespace = "install.operator.istio.io/owning-resource-namespace"
	LabelRevision       = "istio.io/rev"
	// LabelNotPruned opts an object out of pruning.
	LabelNotPruned = "install.operator.istio.io/owning-resource-not-pruned"
	// Managed is LabelManaged's value.
	Managed = "Reconcile"
	// AnnotationNodeRollout marks a node DaemonSet an in-place upgrade replaces the pods of
	// node by node (operator/rollout): applied with updateStrategy OnDelete until the
	// rollout ends, when the apply as rendered removes it.
	AnnotationNodeRollout = "install.operator.istio.io/node-rollout"
)

// BesideInstalls name the installs made to stand beside a control plane's (the eastwest
// profile's metadata.name): an unnamed install never prunes them.
var BesideInstalls = []string{"eastwest"}

// FieldManager is the server-side apply field manager of everything istioctl applies, as
// upstream names it.
const FieldManager = "istio-operator"

// DefaultRevision and DefaultNamespace are the API's (v1alpha1).
const (
	DefaultRevision  = v1alpha1.DefaultRevision
	DefaultNamespace = v1alpha1.DefaultNamespace
)

// Rev is the revision label value of a revision: DefaultRevision for none ("").
func Rev(revision string) string { return v1alpha1.RevisionName(revision) }

// Revision is the spec's revision for a label value: "" for DefaultRevision.
func Revision(rev string) string {
	if rev == DefaultRevision {
		return ""
	}
	return rev
}

// OwnerOf is the ownership identity of an install spec, installed by version; leave lists
// the components it relies on and does not install.
func OwnerOf(iop *v1alpha1.IstioOperator, version string, leave []component.Name) Owner {
	return Owner{Name: iop.Metadata.Name, Namespace: iop.OwnerNamespace(), Revision: iop.Spec.Revision, Version: version, Leave: leave}
}

// Owner identifies an install: the IstioOperator's name and namespace, its revision and the
// version installing it.
type Owner struct {
	Name, Namespace, Revision, Version string
	// Leave lists the components the install relies on and does not install (an existing
	// control plane): whatever of them carries its labels is never pruned or uninstalled.
	Leave []component.Name
}

// Rev is the revision label value.
func (o Owner) Rev() string { return Rev(o.Revision) }

// Removable lists, sorted, the components whose objects the install may delete: all but
// those it leaves and those in except.
func (o Owner) Removable(except ...component.Name) []string {
	var names []string
	for _, c := range component.All {
		if !slices.Contains(o.Leave, c.Name) && !slices.Contains(except, c.Name) {
			names = append(names, string(c.Name))
		}
	}
	sort.Strings(names)
	return names
}

// Labels are the labels every object of component c carries.
func (o Owner) Labels(c component.Name) map[string]string {
	l := map[string]string{
		LabelManaged:        Managed,
		LabelVersion:        o.Version,
		LabelComponent:      string(c),
		LabelOwnerNamespace: o.Namespace,
		LabelRevision:       o.Rev(),
	}
	if o.Name != "" {
		l[LabelOwner] = o.Name
	}
	return l
}

// Selector selects what this install owns and may prune, across istioctl versions
// (upstream also matches the version label, so objects left by another version were never
// pruned).
func (o Owner) Selector() string {
	parts := []string{
		LabelManaged + "=" + Managed,
		LabelOwnerNamespace + "=" + o.Namespace,
		LabelRevision + "=" + o.Rev(),
		fmt.Sprintf("%s in (%s)", LabelComponent, strings.Join(o.Removable(), ",")),
		"!" + LabelNotPruned,
	}
	if o.Name != "" {
		parts = append(parts, LabelOwner+"="+o.Name)
	} else {
		// An unnamed install (a profile, a file without metadata.name) still prunes what a
		// named install of the same revision left (a rollback from a named file), but never
		// the installs made to stand beside the control plane: upstream's selector has no
		// owner term then, so re-installing the control plane deleted the east-west gateway.
		parts = append(parts, LabelOwner+" notin ("+strings.Join(BesideInstalls, ",")+")")
	}
	return strings.Join(parts, ",")
}

// WatchSelector selects, for the waits' watches, what this install has just applied.
func (o Owner) WatchSelector() string {
	return LabelManaged + "=" + Managed + "," + LabelOwnerNamespace + "=" + o.Namespace + "," + LabelRevision + "=" + o.Rev()
}

// UninstallSelector picks what an uninstall removes: one revision's components except Base
// (CRDs and the shared reader account stay, as upstream), or with purge anything any
// istioctl install labelled.
func (o Owner) UninstallSelector(purge bool) string {
	if purge {
		return LabelComponent
	}
	parts := []string{
		LabelOwnerNamespace + "=" + o.Namespace,
		LabelRevision + "=" + o.Rev(),
		fmt.Sprintf("%s in (%s)", LabelComponent, strings.Join(o.Removable(component.Base), ",")),
	}
	if o.Name != "" {
		parts = append(parts, LabelOwner+"="+o.Name)
	}
	return strings.Join(parts, ",")
}

// Foreign is an object a run would apply that exists and that istioctl did not install:
// applying it would take it from whoever manages it (the ownership gate's finding).
type Foreign struct {
	// Object is Kind/namespace/name.
	Object string
	// Manager says who manages it ("Helm release istio-system/istiod", "field manager
	// kubectl-create").
	Manager string
	// Helm says a Helm release lists it: that release would still delete it.
	Helm bool
}

// Ours says istioctl applied the object: it carries the ownership label, or istioctl's
// field manager applied it.
func Ours(labels map[string]string, managed []metav1.ManagedFieldsEntry) bool {
	return labels[LabelManaged] == Managed || appliedByFieldManager(managed)
}

// AppliedByUs says we created o: it carries our labels because we applied it, not because
// a controller copied them (an EndpointSlice copies its Service's labels).
func AppliedByUs(o *unstructured.Unstructured) bool {
	return len(o.GetOwnerReferences()) == 0 && appliedByFieldManager(o.GetManagedFields())
}

func appliedByFieldManager(managed []metav1.ManagedFieldsEntry) bool {
	for _, mf := range managed {
		if mf.Manager == FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

// SameOwner says an object istioctl applied belongs to the install identified by the owner
// namespace and revision and carries no owner name: an install spec without metadata.name
// and the same namespace and revision selects it for pruning.
func SameOwner(labels map[string]string, ownerNamespace, revision string) bool {
	n := labels[LabelOwner]
	return labels[LabelManaged] == Managed && labels[LabelOwnerNamespace] == ownerNamespace &&
		Rev(labels[LabelRevision]) == Rev(revision) && (n == "" || n == "unknown")
}

// ControllerField is a field istioctl renders that a controller takes over once it runs,
// and that is then the controller's: istiod fills in its webhooks' caBundle and switches its
// validators' failurePolicy to Fail once it serves. Once another field manager owns such a
// field, an install neither declares nor takes it (a second install writes nothing), and
// verify-install does not call its value drift; until then the install keeps declaring it
// (dropping failurePolicy while owning it would default it to Fail with nothing serving).
type ControllerField = kube.ControllerField

// KubeOptions are who istioctl's clients apply as: FieldManager, yielding ControllerFields.
func KubeOptions() []kube.Option {
	return []kube.Option{kube.FieldManager(FieldManager), kube.ControllerFields(ControllerFields...)}
}

// ControllerFields are the fields controllers take over, as istiod does.
var ControllerFields = []ControllerField{
	{Kind: "MutatingWebhookConfiguration", List: "webhooks", Path: []string{"clientConfig", "caBundle"}},
	{Kind: "ValidatingWebhookConfiguration", List: "webhooks", Path: []string{"clientConfig", "caBundle"}},
	{Kind: "ValidatingWebhookConfiguration", List: "webhooks", Path: []string{"failurePolicy"}},
}

// IstiodWrite names objects istiod writes while it runs, which carry no install's labels:
// the root certificate and revocation list it gives every namespace, its self-signed CA and
// its leader elections. A purge removes them once istiod has stopped (a running istiod
// writes them again); upstream's purge leaves them behind.
type IstiodWrite struct {
	Kind string
	// Names are exact names; Prefixes match NAME-<revision> (per-revision elections).
	Names, Prefixes []string
	// AllNamespaces: in every namespace, not just the control plane's.
	AllNamespaces bool
}

// leaderElections are istiod's leader election IDs, as pilot/pkg/leaderelection of the
// pinned upstream names them; ConfigMap or Lease locks, some per revision.
var leaderElections = []string{
	"istio-namespace-controller-election", "istio-clustertrustbundle-controller-election",
	"istio-serviceexport-controller-election", "istio-leader", "istio-gateway-status-leader",
	"istio-status-leader", "istio-analyze-leader", "istio-gateway-deployment",
	"istio-gateway-inferencepool", "istio-node-untaint", "istio-ip-autoallocate",
}

// IstiodWrites are the objects a running istiod writes.
var IstiodWrites = []IstiodWrite{
	{Kind: "ConfigMap", Names: []string{"istio-ca-root-cert", "istio-ca-crl"}, AllNamespaces: true},
	{Kind: "Secret", Names: []string{"istio-ca-secret"}},
	{Kind: "ConfigMap", Names: leaderElections, Prefixes: leaderElections},
	{Kind: "Lease", Names: leaderElections, Prefixes: leaderElections},
}

// WrittenByIstiod says whether an object of kind, named name, is one istiod writes in
// namespace ns, istioNamespace being its control plane's.
func WrittenByIstiod(kind, ns, name, istioNamespace string) bool {
	for _, w := range IstiodWrites {
		if w.Kind != kind || (!w.AllNamespaces && ns != istioNamespace) {
			continue
		}
		if slices.Contains(w.Names, name) {
			return true
		}
		for _, p := range w.Prefixes {
			if strings.HasPrefix(name, p+"-") {
				return true
			}
		}
	}
	return false
}
