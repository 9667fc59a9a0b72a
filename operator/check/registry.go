package check

import (
	"context"

	"github.com/istioctl-installer/istioctl/operator/skew"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Selection is a bit set of the runs a check belongs to: the commands that report (precheck,
// verify-install, remote-clusters, the mesh's and the fleet's checks) and the gates a run
// passes before it writes.
type Selection uint

// The selections.
const (
	InPrecheck Selection = 1 << iota
	InVerify
	InLinks
	InCrossCluster
	InFleetLinks
	// GateRelied, GateHop, GateAdmission and GateOwnership are the pre-write gates of
	// install, upgrade and the revision upgrade (Gate).
	GateRelied
	GateHop
	GateAdmission
	// GateOwnership is the ownership gate of every run that applies (install, upgrade,
	// rollback): only --take-ownership lifts it.
	GateOwnership
)

// DocsURL is where the docs/ directory is published: every check's Doc is a page and an
// anchor under it (registry_test resolves each to docs/<page>#<anchor>).
const DocsURL = spec.DocsURL

// doc is the URL of page's anchor.
func doc(page, anchor string) string { return DocsURL + page + "#" + anchor }

// cited is a hint that names its docs anchor, as the sections that began with one do.
func cited(page, id, s string) string { return s + " (" + doc(page, id) + ")" }

// registry is every check of every selection, in the order each selection runs them (a
// selection's order is the rank of its failures).
var registry = []Check{
	// precheck
	{ID: "kubernetes-version", Title: "Kubernetes is recent enough", Section: SectionKubernetes, Severity: Error, Code: "IST0142", In: InPrecheck,
		Doc: doc("verify.md", "kubernetes-version"), Hint: "upgrade the cluster to Kubernetes " + skew.MinKubernetes + " or later", Run: kubernetesVersion},
	{ID: "permissions", Title: "You may create, change and delete what the install renders", Section: SectionPermissions, Severity: Error, Code: "IST0141", In: InPrecheck,
		Doc: doc("verify.md", "permissions"), Hint: "ask a cluster admin for these permissions, or install as a user who has them (" + doc("verify.md", "permissions") + ")", Run: permissions},
	{ID: "existing-control-plane", Title: "What is installed already", Section: SectionExisting, Severity: Warning, In: InPrecheck,
		Doc: doc("verify.md", "existing-control-plane"), Hint: "an in-place upgrade replaces this control plane; install with --revision to run both side by side", Run: existingControlPlane},
	{ID: "istio-namespace-injection", Title: "The istio namespace is not labelled for injection", Section: SectionNamespaces, Severity: Error, In: InPrecheck,
		Doc: doc("verify.md", "istio-namespace-injection"), Hint: "remove the label: kubectl label namespace <ns> istio-injection- (istiod cannot inject itself)", Run: istioNamespaceInjection},
	// admissionSurvey is a server-side dry run of every rendered object and of a pod of each
	// workload (operator/admission); missingReferences finds the ConfigMaps and Secrets a
	// workload cannot start without that neither the install nor the cluster has.
	{ID: "admission", Title: "The cluster admits what the install creates", Section: SectionAdmission, Severity: Error, In: InPrecheck | GateAdmission,
		Doc: doc("verify.md", "admission"), Hint: "see " + doc("verify.md", "admission"), Run: admissionSurvey},
	{ID: "references", Title: "The ConfigMaps and Secrets the workloads need exist", Section: SectionAdmission, Severity: Error, In: InPrecheck | GateAdmission,
		Doc: doc("verify.md", "references"), Hint: "see " + doc("verify.md", "references"), Run: missingReferences},
	{ID: "gateway-api-versions", Title: "Gateway API CRDs serve the versions istiod needs", Section: SectionGatewayAPI, Severity: Error, Code: "IST0156", In: InPrecheck,
		Doc: doc("verify.md", "gateway-api-versions"), Hint: "install Gateway API v1.1 or later (standard channel)", Run: gatewayAPI},
	{ID: "injector-overlap", Title: "No other sidecar injector claims the namespaces this one will", Section: SectionExisting, Severity: Error, Code: "IST0139", In: InPrecheck,
		Doc: doc("verify.md", "injector-overlap"), Hint: "remove the other injector, or install with --revision and move namespaces over with istio.io/rev labels", Run: injectorOverlap},
	{ID: "alpha-annotations", Title: "Alpha annotations in use", Section: SectionNamespaces, Severity: Info, Code: "IST0136", In: InPrecheck,
		Doc: doc("verify.md", "alpha-annotations"), Hint: "alpha annotations may change or go away in a later release", Run: alphaAnnotations},
	{ID: "upgrade-notes", Title: "Behaviour that changed since --from-version", Section: SectionUpgrade, Severity: Warning, Code: "IST0169", In: InPrecheck,
		Doc: doc("verify.md", "upgrade-notes"), Hint: "see the release notes of every version in between", Run: upgradeNotes},

	// the upgrade (precheck); upgrade-hop is also the hop gate
	{ID: "upgrade-hop", Title: "The upgrade's hop keeps the skew rules", Section: SectionUpgradeHop, Severity: Error, In: InPrecheck | GateHop,
		Doc: doc("upgrade.md", "upgrade-hop"), Hint: cited("upgrade.md", "upgrade-hop", hopHint), Run: upgradeHop},
	{ID: "version-skew", Title: "What runs keeps the skew rules with its control plane", Section: SectionUpgradeHop, Severity: Error, In: InPrecheck,
		Doc: doc("upgrade.md", "version-skew"), Hint: cited("upgrade.md", "version-skew",
			"upgrade the control plane first, then CNI, then ztunnel; restart workloads whose proxies are too old onto their revision's proxy"), Run: versionSkew},
	{ID: "compatibility-version", Title: "Behaviour changes the upgrade crosses", Section: SectionUpgradeHop, Severity: Info, In: InPrecheck,
		Doc: doc("upgrade.md", "compatibility-version"), Hint: cited("upgrade.md", "compatibility-version",
			"set compatibilityVersion (spec.compatibilityVersion) to the value given to keep the behaviour of before"), Run: compatibilityChanges},
	{ID: "default-revision", Title: "values.defaultRevision agrees with the default tag", Section: SectionUpgradeHop, Severity: Warning, In: InPrecheck,
		Doc: doc("upgrade.md", "default-revision"), Hint: cited("upgrade.md", "default-revision",
			"make them agree: istioctl tag set default --revision <rev> --overwrite, or install with values.defaultRevision=<rev>"), Run: defaultRevision},
	{ID: "foreign-field-managers", Title: "No other field manager owns what the install applies", Section: SectionUpgradeHop, Severity: Warning, In: InPrecheck,
		Doc: doc("upgrade.md", "foreign-field-managers"), Hint: cited("upgrade.md", "foreign-field-managers",
			"stop the other manager from setting these fields (or exclude them there) before the install takes them over"), Run: foreignFieldManagers},
	{ID: "pdb-blocks-drain", Title: "No PodDisruptionBudget blocks node drains", Section: SectionUpgradeHop, Severity: Warning, In: InPrecheck,
		Doc: doc("upgrade.md", "pdb-blocks-drain"), Hint: cited("upgrade.md", "pdb-blocks-drain",
			"lower minAvailable below the replicas (or raise the replicas), so a node drain can evict a pod"), Run: pdbBlocksDrain},
	{ID: "native-sidecar-webhooks", Title: "Other pod-mutating webhooks know native sidecars", Section: SectionUpgradeHop, Severity: Warning, In: InPrecheck,
		Doc: doc("upgrade.md", "native-sidecar-webhooks"), Hint: cited("upgrade.md", "native-sidecar-webhooks",
			"with native sidecars istio-proxy is an init container: check that these webhooks handle it, or set values.pilot.env.ENABLE_NATIVE_SIDECARS=\"false\""), Run: nativeSidecarWebhooks},

	// verify-install
	{ID: "object-health", Title: "Every expected object exists and is healthy", Section: SectionObjects, Severity: Error, In: InVerify,
		Doc: doc("verify.md", "object-health"), Hint: "reinstall with istioctl install, and see " + doc("verify.md", "object-health"), Run: objectHealth},
	{ID: "webhook-endpoints", Title: "Webhooks reach a ready service", Section: SectionWebhooks, Severity: Error, In: InVerify,
		Doc: doc("verify.md", "webhook-endpoints"), Hint: "an API request the webhook intercepts fails while its Service has no ready endpoint; see " + doc("verify.md", "webhooks"), Run: webhookEndpoints},
	{ID: "webhook-ca-bundle", Title: "Webhooks carry a CA bundle", Section: SectionWebhooks, Severity: Warning, In: InVerify,
		Doc: doc("verify.md", "webhook-ca-bundle"), Hint: "istiod writes the bundle when it starts; see " + doc("verify.md", "webhooks"), Run: webhookCABundle},
	{ID: "drift", Title: "Fields the spec sets are unchanged", Section: SectionDrift, Severity: Error, In: InVerify,
		Doc: doc("verify.md", "drift"), Hint: "someone edited an installed object; istioctl install puts it back (" + doc("verify.md", "drift") + ")", Run: drift},
	{ID: "control-plane-version", Title: "istiod runs the expected version", Section: SectionVersion, Severity: Warning, In: InVerify,
		Doc: doc("verify.md", "control-plane-version"), Hint: "upgrade with istioctl install, or verify with the spec that was installed", Run: controlPlaneVersion},

	// what the spec relies on (spec.external, and an istiod or Base the spec implies by
	// installing their dependents): precheck, verify-install and the relied-on gate. Each
	// returns nothing when the spec relies on nothing of its kind.
	{ID: "relied-control-plane", Title: "The control plane this install relies on runs, is ready and version-compatible", Section: SectionExternal, Severity: Error, In: relied,
		Doc: doc("external-components.md", "relied-control-plane"), Hint: "install that control plane first, or point spec.external.controlPlane (namespace, revision) at the one that runs" + externalDoc, Run: reliedControlPlane},
	{ID: "relied-base", Title: "The Istio CRDs this install relies on are established", Section: SectionExternal, Severity: Error, In: relied,
		Doc: doc("external-components.md", "relied-base"), Hint: "install Base (the CRDs) first, or enable components.base in this spec" + externalDoc, Run: reliedBase},
	{ID: "relied-cni", Title: "The CNI node agent this install relies on runs", Section: SectionExternal, Severity: Error, In: relied,
		Doc: doc("external-components.md", "relied-cni"), Hint: "install CNI first, or enable components.cni in this spec" + externalDoc, Run: reliedCNI},
	{ID: "remote-control-plane", Title: "Injection is wired to the remote control plane", Section: SectionExternal, Severity: Error, In: relied,
		Doc: doc("external-components.md", "remote-control-plane"), Hint: "set spec.external.remote (address, injectionURL) and do not override istiodRemote values by hand" + externalDoc, Run: remoteControlPlane},
	{ID: "ca-plugged-in", Title: "The plugged-in CA is complete, valid, and chains to its root", Section: SectionExternal, Severity: Error, In: relied,
		Doc: doc("external-components.md", "ca-plugged-in"), Hint: "put the CA's ca-cert.pem, ca-key.pem, root-cert.pem and cert-chain.pem in the Secret (kubectl create secret generic cacerts -n <ns> --from-file=...)" + externalDoc, Run: caPluggedIn},
	{ID: "ca-external", Title: "The external CA's address is a Service with ready endpoints", Section: SectionExternal, Severity: Error, In: relied,
		Doc: doc("external-components.md", "ca-external"), Hint: "install the CA (e.g. cert-manager istio-csr) first, or fix spec.external.ca.address" + externalDoc, Run: caExternal},
	{ID: "ca-istiod", Title: "istiod signs with its own CA", Section: SectionExternal, Severity: Warning, In: relied,
		Doc: doc("external-components.md", "ca-istiod"), Hint: "istiod uses a cacerts Secret whenever one exists: delete it, or declare spec.external.ca.type cacerts" + externalDoc, Run: caIstiod},
	{ID: "prometheus", Title: "The declared Prometheus is there and the mesh reports metrics to it", Section: SectionExternal, Severity: Error, In: relied,
		Doc: doc("external-components.md", "prometheus"), Hint: "install Prometheus first, or fix spec.external.prometheus; the mesh's meshConfig.defaultProviders.metrics must name a Prometheus provider" + externalDoc, Run: prometheus},

	// the ownership gate: what a run would take from another manager
	{ID: "ownership", Title: "What the install applies is istioctl's, or adopted", Section: SectionOwnership, Severity: Error, In: GateOwnership,
		Doc: doc("external-components.md", "ownership"), Hint: cited("external-components.md", "ownership",
			"leave it to its manager (an existing control plane: declare it in spec.external.controlPlane and disable those components), or delete it"), Run: foreignObjects},

	// links to other clusters: remote-clusters; verify-install when the spec names the
	// cluster. What can be proved of each link Secret (istio/multiCluster=true) from here,
	// without istiod, and what istiod says when it answers.
	linkCheck("link-namespace", "Link Secrets are where istiod reads them", Error, "create the link again with istioctl create-remote-secret --apply-to, which writes it into the istio namespace, and delete this one", linkNamespace),
	linkCheck("link-cluster-id", "Each link names its cluster once, consistently", Error, "create the link again with istioctl create-remote-secret --name <the cluster's multiCluster.clusterName> --apply-to", linkClusterID),
	linkCheck("link-duplicate", "No cluster ID is in two link Secrets", Error, "istiod registers a cluster ID from the first Secret it reads and skips the others (\"already registered\"): delete all but one", linkDuplicate),
	linkCheck("link-kubeconfig", "Each link's kubeconfig decodes", Error, "create the link again with istioctl create-remote-secret", linkKubeconfig),
	linkCheck("link-auth-method", "Each link authenticates in a way istiod accepts", Error, "use a ServiceAccount token (create-remote-secret's default), or list the method in istiod's PILOT_INSECURE_MULTICLUSTER_KUBECONFIG_OPTIONS", linkAuthMethod),
	linkCheck("link-authenticates", "Each link's credentials authenticate at its apiserver", Error, "create the link again with istioctl create-remote-secret --apply-to (it issues a new token)", linkAuthenticates),
	linkCheck("link-permissions", "Each link's identity may read what istiod reads", Error, "the reader ClusterRole or its binding is missing or changed on that cluster: istioctl create-remote-secret recreates them, as does an install", linkPermissions),
	linkCheck("link-cluster-name", "Each link's cluster ID is that cluster's name", Error, "the cluster ID must equal that cluster's values.global.multiCluster.clusterName: create the link with that --name, or install the cluster with that name", linkClusterName),
	linkCheck("link-token-expiry", "No link's token expires soon", Warning, "rotate it: istioctl create-remote-secret --apply-to again", linkTokenExpiry),
	linkCheck("link-server", "Each link's server is reachable from other clusters", Warning, "pass create-remote-secret --server with an address pods of the other cluster reach", linkServer),
	linkCheck("link-istiod", "istiod has synced each link's cluster", Error, "see the istiod log for the cluster (\"Failed to add remote cluster from secret\")", linkIstiod),

	// across the clusters of a mesh: precheck --remote-contexts, fleet precheck and verify
	cross("mesh-read", "Every cluster of the mesh can be read", Error,
		"check the context with kubectl --context CONTEXT version", crossRead),
	cross("mesh-distinct", "Every cluster of the mesh is a cluster of its own", Error,
		"name each cluster once: two contexts that reach one cluster (the same kube-system UID) are one cluster", crossDistinct),
	cross("mesh-cluster-name", "Every cluster has a name of its own", Error,
		"give each cluster a DNS-1123 name of its own (values.global.multiCluster.clusterName; the fleet file's clusters[].name)", crossNames),
	cross("mesh-id", "Every cluster has the mesh's one mesh ID", Error,
		"set one values.global.meshID in every cluster (the fleet file's spec.meshID)", crossMeshID),
	cross("mesh-primaries", "Every remote's primary is a cluster of the mesh that runs istiod", Error,
		"name, as a remote's primary, a cluster of the fleet with role primary or external", crossPrimaries),
	cross("mesh-network", "Every network of the mesh is reachable through an east-west gateway", Error,
		"label the istio namespace and gateways with the cluster's network, and give every network an east-west gateway", crossNetworks),
	cross("mesh-trust", "Every istiod signs under one root", Error,
		"plug in a cacerts Secret with one root-cert.pem in every cluster that runs istiod, or declare a shared CA (spec.external.ca)", crossTrust),
	cross("mesh-link-server", "Every link reaches its cluster at an address other clusters can reach", Warning,
		"give create-remote-secret --server an address the other cluster's pods can reach", crossLinkServers),

	// the links a fleet makes (fleet precheck and verify); its results carry their own hints
	{ID: "fleet-links", Title: "The fleet's links", Section: SectionFleetLinks, Severity: Error, In: InFleetLinks,
		Doc: doc("fleet.md", "fleet-links"), Run: fleetLinks},
}

// relied are the selections of the relied-on checks.
const relied = InPrecheck | InVerify | GateRelied

// externalDoc ends the relied-on checks' hints.
const externalDoc = "; see " + DocsURL + "external-components.md"

// hopHint is what to do about a hop the skew rules refuse.
const hopHint = "upgrade through the versions in between, or install the new version as a revision beside the old one (--revision)"

// linkCheck is a link check, documented in docs/multicluster.md under its ID.
func linkCheck(id, title string, sev Severity, hint string, run func(context.Context, *Env) []Result) Check {
	return Check{ID: id, Title: title, Section: SectionLinks, Severity: sev, In: InLinks,
		Doc: doc("multicluster.md", id), Hint: cited("multicluster.md", id, hint), Run: run}
}

// cross is a cross-cluster check, documented in docs/multicluster.md under its ID.
func cross(id, title string, sev Severity, hint string, run func([]ClusterFacts) []Result) Check {
	return Check{ID: id, Title: title, Section: SectionCrossCluster, Severity: sev, In: InCrossCluster,
		Doc: doc("multicluster.md", id), Hint: cited("multicluster.md", id, hint), Cross: run}
}

// Select is the checks of selection s, in the registry's order.
func Select(s Selection) []Check {
	var out []Check
	for _, c := range registry {
		if c.In&s != 0 {
			out = append(out, c)
		}
	}
	return out
}

// Precheck is x precheck's selection of checks.
func Precheck() []Check { return Select(InPrecheck) }

// Verify is verify-install's selection of checks.
func Verify() []Check { return Select(InVerify) }

// External is the selection of checks of what the spec relies on; install runs them (the
// relied-on gate) before it writes anything.
func External() []Check { return Select(GateRelied) }

// Admission are the checks install's plan runs before its prompt, as precheck does: a
// refusal of either stops the install before anything is written.
func Admission() []Check { return Select(GateAdmission) }

// Links is remote-clusters' selection.
func Links() []Check { return Select(InLinks) }

// CrossCluster is the selection of checks across the clusters of a mesh: precheck
// --remote-contexts and fleet precheck and verify run all of it.
func CrossCluster() []Check { return Select(InCrossCluster) }
