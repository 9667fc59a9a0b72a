package skew

// Rule is one version-skew rule: what it says and where it is stated.
type Rule struct {
	// ID names the rule in findings ("proxy-skew").
	ID string `json:"id"`
	// Says is the rule in one sentence.
	Says string `json:"says"`
	// Source is the page or thread that states it.
	Source string `json:"source"`
	// Minors is the rule's bound in minor versions, where it has one.
	Minors int `json:"minors,omitempty"`
}

// The rules. Every function of this package cites one of them; nothing else states them.
var (
	InPlace = Rule{ID: "in-place-hop", Minors: 1,
		Says:   "an in-place upgrade moves the control plane one minor version at a time",
		Source: "istio.io/latest/docs/setup/upgrade/in-place/"}
	ByRevision = Rule{ID: "revision-hop", Minors: 2,
		Says:   "a revision-based (canary) upgrade may jump up to two minor versions",
		Source: "istio.io/latest/docs/setup/upgrade/canary/"}
	ProxySkew = Rule{ID: "proxy-skew", Minors: 1,
		Says:   "the control plane may be at most one minor version ahead of any proxy, never behind it",
		Source: "istio.io/latest/docs/releases/supported-releases/#control-planedata-plane-skew"}
	NodeAgentSkew = Rule{ID: "node-agent-skew", Minors: 1,
		Says:   "CNI and ztunnel at 1.x work with a control plane at 1.x or 1.x+1: at most one minor version behind it, never ahead",
		Source: "istio.io/latest/docs/ambient/upgrade/helm/"}
	Order = Rule{ID: "upgrade-order",
		Says:   "upgrade the control plane first, then CNI, then ztunnel (CNI and ztunnel have no canary, even with revisions)",
		Source: "istio.io/latest/docs/ambient/upgrade/helm/"}
	KubernetesWindow = Rule{ID: "kubernetes-window",
		Says:   "each Istio release supports the Kubernetes versions its announcement names",
		Source: "istio.io/latest/docs/releases/supported-releases/#support-status-of-istio-releases"}
	GatewayAPIMinimum = Rule{ID: "gateway-api-minimum",
		Says:   "Istio 1.30 and later need Gateway API CRDs of v1.5 or later: with older ones TLSRoute and ReferenceGrant are silently ignored",
		Source: "istio/istio#60357, istio/istio.io#17394, analyzer IST0176 (1.31)"}
)

// Rules lists every rule, for documentation and `-o json` consumers.
var Rules = []Rule{InPlace, ByRevision, ProxySkew, NodeAgentSkew, Order, KubernetesWindow, GatewayAPIMinimum}
