package install

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/component"
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
)

// Owner identifies an install: the IstioOperator's name and namespace, its revision and the
// version installing it.
type Owner struct {
	Name, Namespace, Revision, Version string
	// Leave lists the components the install relies on and does not install (an existing
	// control plane): whatever of them carries its labels is never pruned or uninstalled.
	Leave []component.Name
}

// removable lists, sorted, the components whose objects the install may delete: all but
// those it leaves and those in except.
func (o Owner) removable(except ...component.Name) []string {
	var names []string
	for _, c := range component.All {
		if !slices.Contains(o.Leave, c.Name) && !slices.Contains(except, c.Name) {
			names = append(names, string(c.Name))
		}
	}
	sort.Strings(names)
	return names
}

// Rev is the revision label value ("default" without a revision).
func (o Owner) Rev() string {
	if o.Revision == "" {
		return "default"
	}
	return o.Revision
}

// Labels are the labels every object of component c carries.
func (o Owner) Labels(c component.Name) map[string]string {
	l := map[string]string{
		LabelManaged:        "Reconcile",
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

// Selector selects what this install owns, across istioctl versions (upstream also matches
// the version label, so objects left by another version were never pruned).
func (o Owner) Selector() string {
	parts := []string{
		LabelManaged + "=Reconcile",
		LabelOwnerNamespace + "=" + o.Namespace,
		LabelRevision + "=" + o.Rev(),
		fmt.Sprintf("%s in (%s)", LabelComponent, strings.Join(o.removable(), ",")),
		"!" + LabelNotPruned,
	}
	if o.Name != "" {
		parts = append(parts, LabelOwner+"="+o.Name)
	}
	return strings.Join(parts, ",")
}

// watchSelector selects, for the waits' watches, what this install has just applied.
func (o Owner) watchSelector() string {
	return LabelManaged + "=Reconcile," + LabelOwnerNamespace + "=" + o.Namespace + "," + LabelRevision + "=" + o.Rev()
}
