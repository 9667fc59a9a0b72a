package v1alpha1

// DefaultRevision names the revision of an install that has none: its objects are labelled
// istio.io/rev=default, and "default" given as a revision means none.
const DefaultRevision = "default"

// DefaultNamespace is the istio namespace when nothing names another.
const DefaultNamespace = "istio-system"

// RevisionName is a revision as labels name it: DefaultRevision for none ("").
func RevisionName(revision string) string {
	if revision == "" {
		return DefaultRevision
	}
	return revision
}

// The three namespaces an install spec names are different rules, so they have different
// names: OwnerNamespace labels ownership, ComponentsNamespace places components and install
// records, IstioNamespace is where the charts place and look for istiod.

// OwnerNamespace is the namespace the install's objects name as their owner's: the
// IstioOperator's metadata.namespace, or DefaultNamespace.
func (iop *IstioOperator) OwnerNamespace() string {
	if iop != nil && iop.Metadata.Namespace != "" {
		return iop.Metadata.Namespace
	}
	return DefaultNamespace
}

// ComponentsNamespace is where the install's components go unless one names another, and
// where its install records live: spec.namespace, else a metadata.namespace other than
// DefaultNamespace (which every profile gives), else values.global.istioNamespace (the only
// one upstream master reads), else DefaultNamespace.
func (iop *IstioOperator) ComponentsNamespace() string {
	if iop == nil {
		return DefaultNamespace
	}
	if ns := SpecNamespace(iop.Spec.Namespace, iop.Metadata.Namespace); ns != "" {
		return ns
	}
	return iop.IstioNamespace()
}

// SpecNamespace is the namespace spec.namespace or metadata.namespace names for the
// components, "" for none: the render gives it to the charts as values.global.istioNamespace.
func SpecNamespace(specNS, metadataNS string) string {
	if specNS != "" {
		return specNS
	}
	if metadataNS != DefaultNamespace {
		return metadataNS
	}
	return ""
}

// IstioNamespace is values.global.istioNamespace, else DefaultNamespace: where the charts
// run istiod and where its dependents look for it.
func (iop *IstioOperator) IstioNamespace() string {
	if iop != nil {
		if g, ok := iop.Spec.Values["global"].(map[string]any); ok {
			if ns, ok := g["istioNamespace"].(string); ok && ns != "" {
				return ns
			}
		}
	}
	return DefaultNamespace
}
